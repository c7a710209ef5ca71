"""The sweep file: a TOML description of a parameter sweep, validated like a scenario.

A sweep names a base scenario (preset or file), fixed overrides, the
transports, the seeds, the engine, rollouts per point and the axes.  Errors
are one line naming the file, the field, the value and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from models.assignments import parse_assignment, set_path
from models.errors import ScenarioError
from models.loading import raw_scenario, validate
from models.strict import Int
from models.text_input import parse_toml, read_text
from models.validation_errors import one_line
from sim.analysis.run import Engine
from sim.sweep.axes import MAX_RUNS, Axis, Sample, Seed, Table, axis_problem
from sim.sweep.design import point_count
from sim.sweep.points import point_table
from sim.turn.transports import Transport


class SweepFile(Table):
    """The validated contents of a sweep file."""

    name: str = Field(min_length=1, description="sweep name")
    description: str = Field("", description="one-line description")
    base: str = Field(
        min_length=1, description="base scenario: preset name or TOML file (relative to the sweep)"
    )
    set: tuple[str, ...] = Field((), description="fixed overrides PATH=VALUE for every point")
    transports: tuple[Transport, ...] = Field(min_length=1, description="transports to run")
    baseline: Transport | None = Field(
        None, description="reductions of the other transports are over this one (default http)"
    )
    engine: Engine = Field(Engine.ANALYTIC, description="analytic (closed form) or des")
    rollouts: Int = Field(500, ge=1, le=10_000_000, description="rollouts per point (des)")
    seeds: tuple[Seed, ...] | None = Field(None, min_length=1, description="explicit seeds")
    replications: Int | None = Field(
        None, ge=1, le=100_000, description="seeds base.seed, base.seed + 1, ... (des)"
    )
    design: Literal["grid", "one-at-a-time"] = Field(
        "grid",
        description="grid: every combination; one-at-a-time: the base point, then each axis "
        "value alone (sensitivity)",
    )
    sample: Sample | None = Field(None, description="sampled design over the low/high axes")
    points_per_part: Int | None = Field(
        None, ge=1, le=100_000, description="points x seeds per task and Parquet part"
    )
    axes: tuple[Axis, ...] = Field(min_length=1, description="the swept paths")


@dataclass(frozen=True)
class Sweep:
    """A loaded sweep: the file's model, its text, the resolved base scenario and seeds."""

    file: SweepFile
    source: str
    text: str
    base_raw: dict[str, Any]
    """The base scenario table, ``extends`` resolved and ``set`` applied (valid)."""
    seeds: tuple[int, ...]
    baseline: Transport | None

    @property
    def runs(self) -> int:
        """Points times seeds: the units of work (each runs every transport)."""
        return point_count(self.file) * len(self.seeds)

    @property
    def points_per_part(self) -> int:
        if self.file.points_per_part is not None:
            return self.file.points_per_part
        return 512 if self.file.engine is Engine.ANALYTIC else 1


def load_sweep(source: str | Path) -> Sweep:
    """Read, validate and resolve a sweep file; bad input raises a one-line ScenarioError."""
    path = Path(source)
    text, file = read_sweep_file(path)
    _check(file, str(source))
    base_raw = _base(file, path.parent, str(source))
    for index, axis in enumerate(file.axes):
        _check_values(base_raw, axis, f"{source}: axes[{index}]")
    seeds = file.seeds or tuple(base_raw["seed"] + r for r in range(file.replications or 1))
    return Sweep(file, str(source), text, base_raw, seeds, _baseline(file))


def read_sweep_file(path: Path) -> tuple[str, SweepFile]:
    """The text of a sweep file and its validated table (the base scenario not resolved)."""
    text = read_text(path, "sweep file")
    data = parse_toml(text, str(path))
    try:
        return text, SweepFile.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(f"{path}: {one_line(error, SweepFile)}") from None


def _check(file: SweepFile, source: str) -> None:
    def fail(message: str) -> None:
        raise ScenarioError(f"{source}: {message}")

    if len(set(file.transports)) != len(file.transports):
        fail(f"transports = {[t.value for t in file.transports]}: must be distinct")
    if file.baseline is not None and file.baseline not in file.transports:
        allowed = ", ".join(t.value for t in file.transports)
        fail(f"baseline = {file.baseline.value!r}: must be one of the transports ({allowed})")
    if file.seeds is not None and file.replications is not None:
        fail("seeds and replications: give one of them, not both")
    if file.seeds is not None and len(set(file.seeds)) != len(file.seeds):
        fail(f"seeds = {list(file.seeds)}: must be distinct")
    seed_count = len(file.seeds) if file.seeds is not None else file.replications or 1
    if file.engine is Engine.DES and file.rollouts < 2:
        fail(f"rollouts = {file.rollouts}: engine = 'des' needs at least 2 for a 95% CI")
    if file.engine is Engine.ANALYTIC and seed_count > 1:
        fail(f"engine = 'analytic' is deterministic: give one seed, not {seed_count}")
    paths = [axis.path for axis in file.axes]
    for path in paths:
        if paths.count(path) > 1:
            fail(f"axes: path {path!r} appears more than once")
    if "seed" in paths:
        fail("axes: path 'seed': give the seeds with seeds = [...] or replications = N")
    for index, axis in enumerate(file.axes):
        problem = axis_problem(axis)
        if problem:
            fail(f"axes[{index}] ({axis.path}): {problem}")
    sampled = [axis.path for axis in file.axes if axis.kind == "sampled"]
    if sampled and file.sample is None:
        fail(f"axes {sampled}: low and high need a [sample] table (method, points, seed)")
    if file.sample is not None and not sampled:
        fail("sample: no axis has low and high to sample")
    if file.design == "one-at-a-time" and sampled:
        fail("design = 'one-at-a-time': axes need values or ranges, not low and high")
    runs = point_count(file) * seed_count
    if runs > MAX_RUNS:
        fail(f"{runs:,} points x seeds: at most {MAX_RUNS:,}")


def _base(file: SweepFile, directory: Path, source: str) -> dict[str, Any]:
    base = file.base
    if (base.endswith(".toml") or "/" in base) and not Path(base).is_absolute():
        base = str(directory / base)
    try:
        data = raw_scenario(base)
        for assignment in file.set:
            set_path(data, *parse_assignment(assignment))
        validate(data)
    except ScenarioError as error:
        message = str(error).replace("--set ", "set ")
        raise ScenarioError(f"{source}: base {file.base!r}: {message}") from None
    return data


def _check_values(base_raw: dict[str, Any], axis: Axis, where: str) -> None:
    """Reject values that are invalid on their own; cross-field conflicts fail only their points."""
    values = axis.bounds() if axis.kind == "sampled" else axis.grid_values()
    for value in values:
        try:
            validate(point_table(base_raw, {axis.path: value}))
        except ScenarioError as error:
            message = str(error)
            if any(message.startswith(axis.path + end) for end in (" ", ":", ".", "[")):
                raise ScenarioError(f"{where}: {message}") from None
            if "--set" in message:
                raise ScenarioError(f"{where}: {message.replace('--set ', 'path ')}") from None


def _baseline(file: SweepFile) -> Transport | None:
    if len(file.transports) < 2:
        return None
    if file.baseline is not None:
        return file.baseline
    return Transport.HTTP if Transport.HTTP in file.transports else file.transports[0]
