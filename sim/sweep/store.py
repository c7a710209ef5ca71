"""The results directory: the sweep file, a manifest and Parquet parts written atomically.

Layout of ``DIR``::

    _sweep.toml        the sweep file, verbatim
    _manifest.json     what the results depend on (fingerprint, package version, sizes)
    parts/part-NNNNNN.parquet   the rows of chunk NNNNNN, written once it is finished

Parquet readers skip names starting with ``_`` or ``.``, so the directory reads
as a dataset of its parts: ``pandas.read_parquet(DIR)``, DuckDB's
``read_parquet('DIR/**/*.parquet')``.  Directories written before, with
``manifest.json`` and ``sweep.toml``, are read as they are and take the new
names when resumed.

A part is written to a temporary name, flushed to disk and renamed, so a
process killed at any moment leaves only whole parts behind; a resumed sweep
runs exactly the chunks without a part.  Reading concatenates the parts and
sorts the rows by point, transport (file order) and seed.
"""

from __future__ import annotations

import json
import os
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from models.errors import ScenarioError
from sim.sweep.rows import ERROR, POINT, SEED, TRANSPORT
from sim.sweep.sweepfile import Sweep

MANIFEST = "_manifest.json"
SWEEP_FILE = "_sweep.toml"
LEGACY_NAMES = {MANIFEST: "manifest.json", SWEEP_FILE: "sweep.toml"}
"""What the manifest and the sweep file were called before they moved out of readers' way."""
PARTS = "parts"
_PART = re.compile(r"^part-(\d{6})\.parquet$")


def package_version() -> str:
    """The installed loopbudget version, recorded with every result."""
    return version("loopbudget")


class ResultsDir:
    """A sweep's output directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parts = path / PARTS

    def open(self, sweep: Sweep, resume: bool) -> set[int]:
        """Prepare the directory for ``sweep``; return the chunks already finished."""
        manifest = metadata_path(self.path, MANIFEST)
        expected = _manifest(sweep)
        if manifest.is_file():
            if not resume:
                raise ScenarioError(
                    f"--out {self.path}: already holds sweep results; "
                    "add --resume to finish them, or choose another directory"
                )
            found = json.loads(manifest.read_text())
            if found.get("fingerprint") != expected["fingerprint"]:
                raise ScenarioError(
                    f"--resume: {self.path} holds results of a different sweep "
                    f"({found.get('name')!r}, loopbudget {found.get('loopbudget_version')}); "
                    "the sweep file, its base scenario or the version changed"
                )
        if self.path.exists() and not self.path.is_dir():
            raise ScenarioError(f"--out {self.path}: exists and is not a directory")
        self.parts.mkdir(parents=True, exist_ok=True)
        for stale in self.parts.glob(".*.tmp"):
            stale.unlink()
        _write_atomic(self.path / SWEEP_FILE, sweep.text.encode())
        _write_atomic(self.path / MANIFEST, json.dumps(expected, indent=2).encode())
        for legacy in LEGACY_NAMES.values():
            (self.path / legacy).unlink(missing_ok=True)
        return self.finished()

    def finished(self) -> set[int]:
        """Chunk numbers that have a part."""
        if not self.parts.is_dir():
            return set()
        return {int(m[1]) for p in self.parts.iterdir() if (m := _PART.match(p.name))}

    def write_part(self, chunk: int, table: pa.Table) -> None:
        """Write the rows of one finished chunk as one Parquet part, atomically."""
        final = self.parts / f"part-{chunk:06d}.parquet"
        temporary = self.parts / f".{final.name}.tmp"
        pq.write_table(table, temporary)
        with temporary.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, final)
        _fsync_directory(self.parts)


def metadata_path(directory: Path, name: str) -> Path:
    """``directory / name``, or its name before the move if only that exists."""
    legacy = directory / LEGACY_NAMES[name]
    return legacy if legacy.is_file() and not (directory / name).is_file() else directory / name


def read_results(path: Path | str) -> pa.Table:
    """All rows of a results directory, sorted by point, transport (file order) and seed."""
    path = Path(path)
    manifest = metadata_path(path, MANIFEST)
    if not manifest.is_file():
        raise ScenarioError(f"{path}: not a sweep results directory (no {MANIFEST})")
    transports = json.loads(manifest.read_text())["transports"]
    parts = sorted(p for p in (path / PARTS).iterdir() if _PART.match(p.name))
    if not parts:
        raise ScenarioError(f"{path}: no finished points yet")
    table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")
    order = pc.index_in(table[TRANSPORT], value_set=pa.array(transports))
    table = table.append_column("_transport_order", order)
    table = table.sort_by(
        [(POINT, "ascending"), ("_transport_order", "ascending"), (SEED, "ascending")]
    )
    return table.drop_columns(["_transport_order"])


def failures(table: pa.Table) -> tuple[int, str | None]:
    """Number of (point, seed) runs that recorded an error, and the first error."""
    failed = table.filter(pc.is_valid(table[ERROR]))
    runs = set(zip(failed[POINT].to_pylist(), failed[SEED].to_pylist(), strict=True))
    return len(runs), (failed[ERROR][0].as_py() if failed.num_rows else None)


def _manifest(sweep: Sweep) -> dict[str, Any]:
    current = package_version()
    return {
        "name": sweep.file.name,
        "fingerprint": sweep.fingerprint(current),
        "loopbudget_version": current,
        "engine": sweep.file.engine.value,
        "transports": [t.value for t in sweep.file.transports],
        "baseline": sweep.baseline.value if sweep.baseline else None,
        "axes": [axis.path for axis in sweep.file.axes],
        "seeds": list(sweep.seeds),
        "runs": sweep.runs,
        "points_per_part": sweep.points_per_part,
    }


def _write_atomic(path: Path, content: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as file:
        file.write(content)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
