"""The sweep file: a TOML description of a parameter sweep, validated like a scenario.

A sweep names a base scenario (preset or file), fixed overrides, the
transports, the seeds, the engine, rollouts per point and the axes.  Errors
are one line naming the file, the field, the value and what is allowed.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from models.errors import ScenarioError, one_line
from models.loading import parse_assignment, raw_scenario, set_path, validate
from sim.analysis.run import Engine
from sim.engine.transports import Transport
from sim.sweep.design import point_count
from sim.sweep.points import point_table

MAX_RUNS = 2_000_000
"""Upper bound on points x seeds: larger sweeps are almost always a typo."""

Seed = Annotated[int, Field(ge=0, le=2**63 - 1)]


class _Table(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Axis(_Table):
    """One swept scenario path: explicit values, a range, or bounds for a sampled design."""

    path: str = Field(
        min_length=1, description="dotted scenario path, e.g. workload.tools[0].weight"
    )
    values: tuple[Any, ...] | None = Field(
        None, min_length=1, description="explicit values (numbers, strings, booleans or tables)"
    )
    start: float | None = Field(None, description="first value of a range")
    stop: float | None = Field(None, description="last value of a range (included)")
    num: int | None = Field(None, ge=1, le=100_000, description="number of values in a range")
    include: tuple[float, ...] = Field(
        (), description="extra values merged into a range (e.g. values to mark on a plot)"
    )
    low: float | None = Field(None, description="lower bound of a sampled axis")
    high: float | None = Field(None, description="upper bound of a sampled axis")
    scale: Literal["linear", "log"] = Field(
        "linear", description="spacing of a range or a sample, and the axis scale of plots"
    )
    integer: bool = Field(False, description="round a range or a sample to integers")

    @property
    def kind(self) -> Literal["values", "range", "sampled"]:
        if self.values is not None:
            return "values"
        return "sampled" if self.low is not None or self.high is not None else "range"

    def grid_values(self) -> list[Any]:
        """The values of an explicit or range axis, in order."""
        if self.values is not None:
            return list(self.values)
        space = np.geomspace if self.scale == "log" else np.linspace
        values = np.union1d(space(self.start, self.stop, self.num), self.include)
        if self.integer:
            return [int(v) for v in np.unique(np.rint(values))]
        return [float(v) for v in values]

    def from_unit(self, unit: np.ndarray) -> list[Any]:
        """Map samples on [0, 1) to [low, high] with this axis's scale (sampled axes)."""
        if self.scale == "log":
            log_low, log_high = math.log(self.low), math.log(self.high)
            values = np.exp(log_low + unit * (log_high - log_low))
        else:
            values = self.low + unit * (self.high - self.low)
        values = np.clip(values, self.low, self.high)
        if self.integer:
            return [int(v) for v in np.rint(values)]
        return [float(v) for v in values]

    def bounds(self) -> list[Any]:
        """The extreme values a sampled axis can take."""
        return self.from_unit(np.array([0.0, 1.0]))


class Sample(_Table):
    """A sampled design over the axes given by ``low`` and ``high``."""

    method: Literal["random", "lhs"] = Field(
        description="random: independent uniform draws; lhs: Latin hypercube (scipy.stats.qmc)"
    )
    points: int = Field(ge=1, le=MAX_RUNS, description="number of sampled points")
    seed: Seed = Field(description="seed of the design (independent of the scenario seeds)")


class SweepFile(_Table):
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
    rollouts: int = Field(500, ge=1, le=10_000_000, description="rollouts per point (des)")
    seeds: tuple[Seed, ...] | None = Field(None, min_length=1, description="explicit seeds")
    replications: int | None = Field(
        None, ge=1, le=100_000, description="seeds base.seed, base.seed + 1, ... (des)"
    )
    design: Literal["grid", "one-at-a-time"] = Field(
        "grid",
        description="grid: every combination; one-at-a-time: the base point, then each axis "
        "value alone (sensitivity)",
    )
    sample: Sample | None = Field(None, description="sampled design over the low/high axes")
    points_per_part: int | None = Field(
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

    def fingerprint(self, version: str) -> str:
        """Identifies what the results depend on: the sweep, the base scenario, the version."""
        payload = {
            "sweep": self.file.model_dump(mode="json"),
            "base": self.base_raw,
            "seeds": self.seeds,
            "version": version,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def load_sweep(source: str | Path) -> Sweep:
    """Read, validate and resolve a sweep file; bad input raises a one-line ScenarioError."""
    path = Path(source)
    if not path.is_file():
        raise ScenarioError(f"sweep file = {str(source)!r}: no such file")
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{source}: invalid TOML: {error}") from None
    try:
        file = SweepFile.model_validate(data)
    except ValidationError as error:
        raise ScenarioError(f"{source}: {one_line(error, SweepFile)}") from None
    _check(file, str(source))
    base_raw = _base(file, path.parent, str(source))
    for index, axis in enumerate(file.axes):
        _check_values(base_raw, axis, f"{source}: axes[{index}]")
    seeds = file.seeds or tuple(base_raw["seed"] + r for r in range(file.replications or 1))
    return Sweep(file, str(source), text, base_raw, seeds, _baseline(file))


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
    if file.engine is Engine.ANALYTIC and seed_count > 1:
        fail(f"engine = 'analytic' is deterministic: give one seed, not {seed_count}")
    paths = [axis.path for axis in file.axes]
    for path in paths:
        if paths.count(path) > 1:
            fail(f"axes: path {path!r} appears more than once")
    if "seed" in paths:
        fail("axes: path 'seed': give the seeds with seeds = [...] or replications = N")
    for index, axis in enumerate(file.axes):
        problem = _axis_problem(axis)
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


def _axis_problem(axis: Axis) -> str | None:
    given = {
        name
        for name in ("values", "start", "stop", "num", "low", "high")
        if getattr(axis, name) is not None
    }
    kinds = [
        kind
        for kind, names in (
            ("values", {"values"}),
            ("start/stop/num", {"start", "stop", "num"}),
            ("low/high", {"low", "high"}),
        )
        if given & names
    ]
    if len(kinds) != 1:
        return "give exactly one of: values = [...]; start, stop and num; low and high"
    if kinds[0] == "start/stop/num" and given != {"start", "stop", "num"}:
        return (
            f"a range needs start, stop and num; missing {sorted({'start', 'stop', 'num'} - given)}"
        )
    if kinds[0] == "low/high" and given != {"low", "high"}:
        return f"a sampled axis needs low and high; missing {sorted({'low', 'high'} - given)}"
    if axis.include and kinds[0] != "start/stop/num":
        return "include is only for ranges (start, stop, num)"
    if axis.integer and kinds[0] == "values":
        return "integer is only for ranges and sampled axes"
    first, last = (axis.start, axis.stop) if axis.low is None else (axis.low, axis.high)
    if first is not None and last is not None:
        names = "start, stop" if axis.low is None else "low, high"
        if not first < last:
            return f"{names} = {first}, {last}: the first must be smaller"
        if axis.scale == "log" and first <= 0:
            return f"scale = 'log' needs positive bounds, got {names} = {first}, {last}"
    if axis.scale == "log" and any(v <= 0 for v in axis.include):
        return f"scale = 'log' needs positive include values, got {list(axis.include)}"
    return None


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
