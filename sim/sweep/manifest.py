"""The manifest of a results directory: what its rows depend on, and how many each part holds.

It is written when a sweep starts and read strictly: a manifest that is not
JSON, or lacks a field, is a one-line error rather than a traceback.
"""

from __future__ import annotations

import math
from importlib.metadata import version
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from models.errors import ScenarioError
from models.strict import Int
from models.text_input import parse_json, read_text
from models.validation_errors import one_line
from sim.sweep.sweepfile import Sweep

MANIFEST = "_manifest.json"
SWEEP_FILE = "_sweep.toml"
PARTS = "parts"
OWN_FILES = (SWEEP_FILE, f"{PARTS}/")
"""What the writer makes in a results directory besides the manifest and its lock: the
only names it ever replaces, and inside ``parts/`` (its own directory) the only files
it ever removes (damaged parts, temporaries of a killed writer)."""
LEGACY_NAMES = {MANIFEST: "manifest.json", SWEEP_FILE: "sweep.toml"}
"""What the manifest and the sweep file were called before they moved out of readers' way."""


def metadata_path(directory: Path, name: str) -> Path:
    """``directory / name``, or its name before the move if only that exists."""
    legacy = directory / LEGACY_NAMES[name]
    return legacy if legacy.is_file() and not (directory / name).is_file() else directory / name


def package_version() -> str:
    """The installed loopbudget version, recorded with every result."""
    return version("loopbudget")


class Manifest(BaseModel):
    """The contents of ``_manifest.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    fingerprint: str = Field(min_length=1)
    loopbudget_version: str
    engine: str
    transports: tuple[str, ...] = Field(min_length=1)
    baseline: str | None
    axes: tuple[str, ...]
    seeds: tuple[Int, ...] = Field(min_length=1)
    runs: Int = Field(ge=1)
    points_per_part: Int = Field(ge=1)
    files: tuple[str, ...] = ()
    """The files the writer made here (``OWN_FILES``); empty in manifests of older versions."""

    @property
    def chunks(self) -> int:
        """Parts of a finished sweep."""
        return math.ceil(self.runs / self.points_per_part)

    def part_rows(self, chunk: int) -> int:
        """Rows of part ``chunk``: its runs (point x seed) times the transports."""
        return len(self.runs_of(chunk)) * len(self.transports)

    def runs_of(self, chunk: int) -> list[tuple[int, int]]:
        """The runs (point, seed) of chunk ``chunk``, in order: points first, then seeds."""
        first = chunk * self.points_per_part
        last = min(self.runs, first + self.points_per_part)
        count = len(self.seeds)
        return [(run // count, self.seeds[run % count]) for run in range(first, last)]


def manifest_of(sweep: Sweep, fingerprint: str) -> Manifest:
    """The manifest of ``sweep`` as run by this version (``fingerprint``: its
    ``sim.sweep.fingerprint.resolve``)."""
    current = package_version()
    return Manifest(
        name=sweep.file.name,
        fingerprint=fingerprint,
        loopbudget_version=current,
        engine=sweep.file.engine.value,
        transports=tuple(t.value for t in sweep.file.transports),
        baseline=sweep.baseline.value if sweep.baseline else None,
        axes=tuple(axis.path for axis in sweep.file.axes),
        seeds=sweep.seeds,
        runs=sweep.runs,
        points_per_part=sweep.points_per_part,
        files=OWN_FILES,
    )


def read_manifest(directory: Path) -> Manifest:
    """The manifest of a results directory; missing or damaged is a one-line error."""
    path = metadata_path(directory, MANIFEST)
    if not path.is_file():
        raise ScenarioError(f"{directory}: not a sweep results directory (no {MANIFEST})")
    where = f"{directory}: {MANIFEST} is damaged"
    data = parse_json(read_text(path, MANIFEST), where)
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: expected a JSON object")
    try:
        return Manifest.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(f"{where}: {one_line(error, Manifest)}") from None
