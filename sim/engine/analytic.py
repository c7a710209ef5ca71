"""The analytic engine: closed-form expected value of every stage, one agent, no contention.

It evaluates the same cost functions as the DES (``models.costs``) on expected
per-turn work, for many scenarios at once: ``expect_columns`` takes a column
form (``sim.engine.columns``), and ``expect`` is its one-point case.  The
rollout is laid out once at its longest, each turn weighted by the
probability of reaching it (``sim.engine.layout``); turns are cold or warm
with the probability ``sim.engine.connection_loss`` computes over the
distribution of turn durations; the one nonlinear cost, the parallel-safety
excess, is an expectation over the distribution of tokens
(``sim.engine.excess``).  HTTP render and safety work at turn k is
proportional to the context, which grows linearly with k, so their total
over a rollout of n turns grows with n squared; WebSocket processes only each
turn's new input, so its total grows with n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from models.costs import TurnCosts, stage_costs
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.engine.columns import column_form, take_points
from sim.engine.compacting import compacting_sums
from sim.engine.connection_loss import ColdTurns, keep_alive, websocket
from sim.engine.excess import Excess, parallel_excess
from sim.engine.expected_draws import expected_draws
from sim.engine.layout import (
    FIRST,
    PROBE_LAST,
    SECOND,
    THIRD,
    TurnCount,
    probe_turns,
    rollout_sum,
    total,
    turn_count,
)
from sim.engine.tool_overlap import expected_hidden_post_s
from sim.engine.transports import Transport, turn_work


class Approximation(StrEnum):
    """What keeps an expectation from being exact (``docs/model.md``, section 9)."""

    CONNECTION_LOSS = "connection_loss"
    """WebSocket cache loss over the distribution of decode and tool times, the rest of
    each request at its expected value."""
    ROTATION_GRID = "rotation_grid"
    """The connection's age followed on a lattice (rotation possible within a rollout)."""
    PARALLEL_EXCESS = "parallel_excess"
    """The parallel-safety excess with prior tokens as a log-normal, by quadrature."""
    PARALLEL_TOOLS = "parallel_tools"
    """The slowest of a turn's parallel calls on a grid (``sim.engine.parallel_tools``)."""
    COMPACTION = "compaction"
    """The history's law followed on a grid, each turn's costs at its expected inputs given
    a compaction before it or not (``sim.engine.context_grid``)."""


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
    approximations: tuple[str, ...] = ()
    """``Approximation`` values that apply to this result; empty when it is exact."""

    @property
    def e2e_s(self) -> float:
        return float(self.stage_s.sum())

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
            approximations=self.approximations[index],
        )

    def points(self) -> list[Expectation]:
        return [self.point(index) for index in range(len(self))]


def expect(scenario: Scenario, transport: Transport) -> Expectation:
    """Expected per-rollout budget of ``scenario`` under ``transport``."""
    return expect_columns(column_form([scenario]), transport).point(0)


def expect_many(scenarios: Sequence[Scenario], transport: Transport) -> list[Expectation]:
    """``expect`` of every scenario, evaluated together (the same values, bit for bit)."""
    return expect_columns(column_form(scenarios), transport).points()


TTFT, API_CPU, SAFETY_CPU = range(len(STAGES), len(STAGES) + 3)
"""Columns after the stages in a quantity matrix."""
_REQUEST = [STAGE_COLUMN[s] for s in STAGES if s is not Stage.TOOL]


def expect_columns(columns: Any, transport: Transport) -> Expectations:
    """Expected per-rollout budget of every point of ``columns`` (a column form)."""
    compacting = columns.compaction.threshold_tokens[:, 0] > 0
    if not compacting.any():
        return _expect_uncompacted(columns, transport)
    parts = [
        (rows, method(take_points(columns, rows), transport))
        for rows, method in (
            (np.flatnonzero(~compacting), _expect_uncompacted),
            (np.flatnonzero(compacting), _expect_compacting),
        )
        if rows.size
    ]
    return _stitch(parts, columns.points)


def _expect_compacting(columns: Any, transport: Transport) -> Expectations:
    sums, count, cold = compacting_sums(columns, transport)
    later = count.index >= 1
    no = np.zeros(columns.points, dtype=bool)
    parallel = expected_draws(columns).parallel
    flags = _approximations(transport, cold, no, parallel, ~no)
    return Expectations(
        stage_s=sums[:, : len(STAGES)],
        turns=count.turns,
        cold_turns=1.0 + total(np.where(later, count.reach * cold.probability, 0.0)),
        ttft_sum_s=sums[:, TTFT],
        api_cpu_s=sums[:, API_CPU],
        safety_cpu_s=sums[:, SAFETY_CPU],
        approximations=flags,
    )


def _stitch(parts: list[tuple[np.ndarray, Expectations]], points: int) -> Expectations:
    """One ``Expectations`` of the points of ``parts`` (each: its rows and their results)."""
    values: dict[str, Any] = {}
    for name in ("stage_s", "turns", "cold_turns", "ttft_sum_s", "api_cpu_s", "safety_cpu_s"):
        first = getattr(parts[0][1], name)
        out = np.empty((points, *first.shape[1:]))
        for rows, part in parts:
            out[rows] = getattr(part, name)
        values[name] = out
    approximations: list[tuple[str, ...]] = [()] * points
    for rows, part in parts:
        for row, flags in zip(rows.tolist(), part.approximations, strict=True):
            approximations[row] = flags
    return Expectations(**values, approximations=tuple(approximations))


def _expect_uncompacted(columns: Any, transport: Transport) -> Expectations:
    draws = expected_draws(columns)
    count = turn_count(draws.tool_calls)
    probes = probe_turns(columns, draws)
    work = turn_work(columns, transport, probes)
    excess = parallel_excess(columns, draws, count, work)
    hidden_s = expected_hidden_post_s(columns, draws) * (1.0 - PROBE_LAST)
    quantities = np.stack(
        [
            _quantities(
                stage_costs(columns, w, parallel_excess_s=e, post_hidden_s=hidden_s), probes.shape
            )
            for w, e in zip(work, excess.at_probes, strict=True)
        ]
    )
    cold = _cold_turns(columns, draws, count, transport, quantities, excess)
    sums = rollout_sum(quantities, count, cold.probability) + _later_excess(count, cold, excess)
    later = count.index >= 1
    no = np.zeros(columns.points, dtype=bool)
    approximations = _approximations(transport, cold, excess.approximate, draws.parallel, no)
    return Expectations(
        stage_s=sums[:, : len(STAGES)],
        turns=count.turns,
        cold_turns=1.0 + total(np.where(later, count.reach * cold.probability, 0.0)),
        ttft_sum_s=sums[:, TTFT],
        api_cpu_s=sums[:, API_CPU],
        safety_cpu_s=sums[:, SAFETY_CPU],
        approximations=approximations,
    )


def _quantities(costs: TurnCosts, shape: tuple[int, ...]) -> np.ndarray:
    """Shape (points, probes, stages + 3): every stage, TTFT, API and safety work."""
    columns = [costs.stage_s[stage] for stage in STAGES]
    columns += [costs.ttft_s, costs.api_cpu_s, costs.safety_cpu_s]
    out = np.empty((*shape, len(columns)))
    for index, values in enumerate(columns):
        out[..., index] = values
    return out


def _cold_turns(
    columns: Any,
    draws: Any,
    count: TurnCount,
    transport: Transport,
    quantities: np.ndarray,
    excess: Excess,
) -> ColdTurns:
    if not transport.is_websocket:
        return keep_alive(columns, draws, count)
    # A turn's duration without decode and tool, when it is not the last turn (the
    # chain follows rollouts that go on), affine in k from the probes.
    request_s = quantities[..., _REQUEST].sum(axis=-1) - quantities[..., STAGE_COLUMN[Stage.DECODE]]
    k = count.index
    parts = []
    for variant, later in zip(request_s, excess.later, strict=True):
        level, slope = variant[:, SECOND, None], (variant[:, THIRD] - variant[:, SECOND])[:, None]
        affine = np.where(k == 0, variant[:, FIRST, None], level + slope * np.maximum(k - 1, 0))
        parts.append(affine + later)
    return websocket(columns, draws, count, parts[0], parts[1])


def _later_excess(count: TurnCount, cold: ColdTurns, excess: Excess) -> np.ndarray:
    """The expected excess of turns k >= 1 in the safety stage and in TTFT, per point."""
    shares = (cold.probability, 1.0 - cold.probability)
    added = sum(
        total(count.reach * share * later)
        for share, later in zip(shares, excess.later, strict=True)
    )
    out = np.zeros((count.reach.shape[0], TTFT + 3))
    out[:, STAGE_COLUMN[Stage.SAFETY]] = added
    out[:, TTFT] = added
    return out


def _approximations(
    transport: Transport,
    cold: ColdTurns,
    excess: np.ndarray,
    parallel: np.ndarray,
    compaction: np.ndarray,
) -> tuple[tuple[str, ...], ...]:
    flags = (
        (Approximation.CONNECTION_LOSS, cold.from_durations & transport.is_websocket),
        (Approximation.ROTATION_GRID, cold.on_grid),
        (Approximation.PARALLEL_EXCESS, excess),
        (Approximation.PARALLEL_TOOLS, parallel),
        (Approximation.COMPACTION, compaction),
    )
    # One tuple per combination of flags, shared by the points that have it.
    code = sum(mask.astype(int) << bit for bit, (_, mask) in enumerate(flags))
    names = [
        tuple(str(name) for bit, (name, _) in enumerate(flags) if combination >> bit & 1)
        for combination in range(1 << len(flags))
    ]
    return tuple(names[c] for c in code.tolist())
