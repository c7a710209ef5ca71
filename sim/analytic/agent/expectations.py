"""The analytic engine's results: expected values per rollout of one point or of many, and
the approximations that apply to each."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np


class Approximation(StrEnum):
    """What keeps an expectation from being exact (``docs/model/analytic.md``)."""

    CONNECTION_LOSS = "connection_loss"
    """WebSocket cache loss over the distribution of decode and tool times, the rest of
    each request at its expected value."""
    ROTATION_GRID = "rotation_grid"
    """The connection's age followed on a lattice (rotation possible within a rollout)."""
    SESSION_CONNECTION = "session_connection"
    """A WebSocket kept across rollouts: its age at each request from the stationary
    renewal of its life (``sim.analytic.agent.session_connection``)."""
    PARALLEL_EXCESS = "parallel_excess"
    """The parallel-safety excess with prior tokens as a log-normal, by quadrature."""
    PREFIX_RESIDENCY = "prefix_residency"
    """KV residency: a history survives its gap when the tool's time is within the
    time-to-live, and only the last turn's replica can hold it
    (``sim.analytic.agent.prefix_survival``)."""
    PARALLEL_TOOLS = "parallel_tools"
    """The slowest of a turn's parallel calls on a grid (``sim.analytic.agent.parallel_tools``)."""
    COMPACTION = "compaction"
    """The history's law followed on a grid, each turn's costs at its expected inputs given
    a compaction before it or not (``sim.analytic.agent.context_grid``)."""

    @property
    def bound(self) -> str:
        """The largest error measured against the DES (``docs/model/analytic.md``)."""
        return BOUNDS[self]


BOUNDS = {
    Approximation.CONNECTION_LOSS: "connections per rollout within 1% of the DES",
    Approximation.ROTATION_GRID: "connections per rollout within 1% of the DES",
    Approximation.SESSION_CONNECTION: (
        "connections per rollout within the DES's 95% interval from a 60 s lifetime up, "
        "6% high at 30 s"
    ),
    Approximation.PARALLEL_EXCESS: (
        "the classifiers' excess within 0.1% when it is over 0.5 s per rollout, "
        "25% low when it is under 0.1 ms"
    ),
    Approximation.PREFIX_RESIDENCY: "hit rate within 1.5 points of the DES (one agent)",
    Approximation.PARALLEL_TOOLS: "the slowest call's mean within 1e-5 relative",
    Approximation.COMPACTION: "e2e and compaction time within the DES's 95% interval",
}
"""What each flag costs at most, as measured against the DES."""


@dataclass(frozen=True)
class Expectation:
    """Expected values per rollout."""

    stage_s: np.ndarray
    """Expected seconds per stage per rollout, in ``STAGES`` order."""
    turns: float
    cold_turns: float
    ttft_sum_s: float
    api_cpu_s: float
    safety_cpu_s: float
    cached_prompt_tokens: float
    uncached_prompt_tokens: float
    approximations: tuple[str, ...] = ()
    """``Approximation`` values that apply to this result; empty when it is exact."""

    @property
    def e2e_s(self) -> float:
        return float(self.stage_s.sum())

    @property
    def prefix_cache_hit_rate(self) -> float:
        """Expected cached prompt tokens over expected prompt tokens."""
        return self.cached_prompt_tokens / (self.cached_prompt_tokens + self.uncached_prompt_tokens)

    @property
    def ttft_mean_s(self) -> float:
        """Mean TTFT over turns: E[sum of TTFTs] / E[turns], as the DES pools it."""
        return self.ttft_sum_s / self.turns


@dataclass(frozen=True)
class Expectations:
    """Expected values per rollout of many points: arrays over points."""

    stage_s: np.ndarray
    """Shape (points, len(STAGES))."""
    turns: np.ndarray
    cold_turns: np.ndarray
    ttft_sum_s: np.ndarray
    api_cpu_s: np.ndarray
    safety_cpu_s: np.ndarray
    cached_prompt_tokens: np.ndarray
    uncached_prompt_tokens: np.ndarray
    approximations: tuple[tuple[str, ...], ...]

    def __len__(self) -> int:
        return int(self.turns.size)

    def point(self, index: int) -> Expectation:
        """The expectation of one point."""
        return Expectation(
            stage_s=self.stage_s[index].copy(),
            turns=float(self.turns[index]),
            cold_turns=float(self.cold_turns[index]),
            ttft_sum_s=float(self.ttft_sum_s[index]),
            api_cpu_s=float(self.api_cpu_s[index]),
            safety_cpu_s=float(self.safety_cpu_s[index]),
            cached_prompt_tokens=float(self.cached_prompt_tokens[index]),
            uncached_prompt_tokens=float(self.uncached_prompt_tokens[index]),
            approximations=self.approximations[index],
        )

    def take(self, rows: np.ndarray) -> Expectations:
        """The expectations of the points ``rows``, in that order."""
        values = {name: getattr(self, name)[rows] for name in _PER_POINT}
        flags = tuple(self.approximations[row] for row in rows.tolist())
        return Expectations(**values, approximations=flags)

    def points(self) -> list[Expectation]:
        return [self.point(index) for index in range(len(self))]


_PER_POINT = (
    "stage_s",
    "turns",
    "cold_turns",
    "ttft_sum_s",
    "api_cpu_s",
    "safety_cpu_s",
    "cached_prompt_tokens",
    "uncached_prompt_tokens",
)


def stitch(parts: list[tuple[np.ndarray, Expectations]], points: int) -> Expectations:
    """One ``Expectations`` of the points of ``parts`` (each: its rows and their results)."""
    values: dict[str, Any] = {}
    for name in _PER_POINT:
        first = getattr(parts[0][1], name)
        out = np.empty((points, *first.shape[1:]))
        for rows, part in parts:
            out[rows] = getattr(part, name)
        values[name] = out
    approximations: list[tuple[str, ...]] = [()] * points
    for rows, part in parts:
        if rows.size and int(rows[-1]) - int(rows[0]) + 1 == rows.size:  # a block: a run
            approximations[int(rows[0]) : int(rows[-1]) + 1] = part.approximations
            continue
        for row, flags in zip(rows.tolist(), part.approximations, strict=True):
            approximations[row] = flags
    return Expectations(**values, approximations=tuple(approximations))
