"""The axes of a sweep file: explicit values, ranges, sampled bounds, and what makes one bad."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from models.strict import Bool, Float, Int

MAX_RUNS = 2_000_000
"""Upper bound on points x seeds: larger sweeps are almost always a typo."""

Seed = Annotated[Int, Field(ge=0, le=2**63 - 1)]


class Table(BaseModel):
    """A table of the sweep file: frozen, and unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Axis(Table):
    """One swept scenario path: explicit values, a range, or bounds for a sampled design."""

    path: str = Field(
        min_length=1, description="dotted scenario path, e.g. workload.tools[0].weight"
    )
    values: tuple[Any, ...] | None = Field(
        None, min_length=1, description="explicit values (numbers, strings, booleans or tables)"
    )
    start: Float | None = Field(None, description="first value of a range")
    stop: Float | None = Field(None, description="last value of a range (included)")
    num: Int | None = Field(None, ge=1, le=100_000, description="number of values in a range")
    include: tuple[Float, ...] = Field(
        (), description="extra values merged into a range (e.g. values to mark on a plot)"
    )
    low: Float | None = Field(None, description="lower bound of a sampled axis")
    high: Float | None = Field(None, description="upper bound of a sampled axis")
    scale: Literal["linear", "log"] = Field(
        "linear", description="spacing of a range or a sample, and the axis scale of plots"
    )
    integer: Bool = Field(False, description="round a range or a sample to integers")

    @property
    def kind(self) -> Literal["values", "range", "sampled"]:
        if self.values is not None:
            return "values"
        return "sampled" if self.low is not None or self.high is not None else "range"

    def grid_values(self) -> list[Any]:
        """The values of an explicit or range axis, in order."""
        if self.values is not None:
            return list(self.values)
        start, stop, num = self.start, self.stop, self.num
        if start is None or stop is None or num is None:
            raise ValueError(f"axis {self.path}: a range needs start, stop and num")
        space = np.geomspace if self.scale == "log" else np.linspace
        values = np.union1d(space(start, stop, num), np.asarray(self.include, dtype=float))
        if self.integer:
            return [int(v) for v in np.unique(np.rint(values))]
        return values.tolist()  # Python floats, as float(v) of each value

    def from_unit(self, unit: np.ndarray) -> list[Any]:
        """Map samples on [0, 1) to [low, high] with this axis's scale (sampled axes)."""
        low, high = self.low, self.high
        if low is None or high is None:
            raise ValueError(f"axis {self.path}: a sampled axis needs low and high")
        if self.scale == "log":
            log_low, log_high = math.log(low), math.log(high)
            values = np.exp(log_low + unit * (log_high - log_low))
        else:
            values = low + unit * (high - low)
        values = np.clip(values, low, high)
        if self.integer:
            return [int(v) for v in np.rint(values)]
        return [float(v) for v in values]

    def bounds(self) -> list[Any]:
        """The extreme values a sampled axis can take."""
        return self.from_unit(np.array([0.0, 1.0]))


class Sample(Table):
    """A sampled design over the axes given by ``low`` and ``high``."""

    method: Literal["random", "lhs"] = Field(
        description="random: independent uniform draws; lhs: Latin hypercube (scipy.stats.qmc)"
    )
    points: Int = Field(ge=1, le=MAX_RUNS, description="number of sampled points")
    seed: Seed = Field(description="seed of the design (independent of the scenario seeds)")


def axis_problem(axis: Axis) -> str | None:
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
