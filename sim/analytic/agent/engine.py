"""The analytic engine: closed-form expected value of every stage, one agent, no contention.

It evaluates the same cost functions as the DES (``models.costs``) on expected
per-turn work, for many scenarios at once: ``expect_columns`` takes a column
form (``sim.analytic.agent.columns``), and ``expect`` is its one-point case.  The
rollout is laid out once at its longest, each turn weighted by the
probability of reaching it (``sim.analytic.agent.layout``); turns are cold or warm
with the probability ``sim.analytic.agent.connection_loss`` computes over the
distribution of turn durations; the one nonlinear cost, the parallel-safety
excess, is an expectation over the distribution of tokens
(``sim.analytic.agent.excess``).  HTTP render and safety work at turn k is
proportional to the context, which grows linearly with k, so their total
over a rollout of n turns grows with n squared; WebSocket processes only each
turn's new input, so its total grows with n.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from models.costs import TurnCosts, Work, stage_costs
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analytic.agent.columns import column_form, take_points
from sim.analytic.agent.compacting import compacting_sums
from sim.analytic.agent.connection_loss import ColdTurns, keep_alive, websocket
from sim.analytic.agent.excess import Excess, parallel_excess
from sim.analytic.agent.expectations import Approximation, Expectation, Expectations, stitch
from sim.analytic.agent.expected_draws import expected_draws
from sim.analytic.agent.layout import (
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
from sim.analytic.agent.prefix_survival import history_resident
from sim.analytic.agent.tool_overlap import expected_hidden_post_s
from sim.turn.transports import Transport, cached_prompt_tokens, turn_work


def expect(scenario: Scenario, transport: Transport, resident: float | None = None) -> Expectation:
    """Expected per-rollout budget of ``scenario`` under ``transport``; ``resident``, when
    given, is P(a turn finds its history) in place of the single agent's (a fleet's)."""
    return expect_columns(column_form([scenario]), transport, resident).point(0)


def expect_many(scenarios: Sequence[Scenario], transport: Transport) -> list[Expectation]:
    """``expect`` of every scenario, evaluated together (the same values, bit for bit)."""
    return expect_columns(column_form(scenarios), transport).points()


TTFT, API_CPU, SAFETY_CPU, CACHED, UNCACHED = range(len(STAGES), len(STAGES) + 5)
"""Columns after the stages in a quantity matrix."""
QUANTITIES = UNCACHED + 1
_REQUEST = [STAGE_COLUMN[s] for s in STAGES if s is not Stage.TOOL]


def expect_columns(
    columns: Any, transport: Transport, resident: float | None = None
) -> Expectations:
    """Expected per-rollout budget of every point of ``columns`` (a column form); ``resident``,
    when given, is P(a turn finds its history) for every point (a fleet's)."""
    compacting = columns.compaction.threshold_tokens[:, 0] > 0
    if not compacting.any():
        return _expect_uncompacted(columns, transport, resident)
    parts = [
        (rows, method(take_points(columns, rows), transport, resident))
        for rows, method in (
            (np.flatnonzero(~compacting), _expect_uncompacted),
            (np.flatnonzero(compacting), _expect_compacting),
        )
        if rows.size
    ]
    return stitch(parts, columns.points)


def _expect_compacting(columns: Any, transport: Transport, resident: float | None) -> Expectations:
    draws = expected_draws(columns)
    sums, count, cold = compacting_sums(
        columns, transport, resident_share(columns, draws, transport, resident)
    )
    no = np.zeros(columns.points, dtype=bool)
    residency = columns.kv_cache.residency[:, 0] > 0
    flags = _approximations(transport, cold, no, draws.parallel, ~no, residency)
    return _expectations(sums, count, cold, flags)


def resident_share(
    columns: Any, draws: Any, transport: Transport, resident: float | None
) -> np.ndarray:
    """P(a turn k >= 1 finds its history on its replica), shape (points, 1): ``resident``
    when given, else the single agent's (``sim.analytic.agent.prefix_survival``)."""
    if resident is None:
        return history_resident(columns, draws, transport)
    return np.full((columns.points, 1), resident)


def _expect_uncompacted(columns: Any, transport: Transport, resident: float | None) -> Expectations:
    draws = expected_draws(columns)
    count = turn_count(draws.tool_calls)
    probes = probe_turns(columns, draws, resident_share(columns, draws, transport, resident))
    work = turn_work(columns, transport, probes)
    excess = parallel_excess(columns, draws, count, work)
    cached = cached_prompt_tokens(columns, probes)
    hidden_s = expected_hidden_post_s(columns, draws) * (1.0 - PROBE_LAST)
    quantities = np.stack(
        [
            _quantities(
                stage_costs(columns, w, parallel_excess_s=e, post_hidden_s=hidden_s),
                w,
                cached,
                probes.shape,
            )
            for w, e in zip(work, excess.at_probes, strict=True)
        ]
    )
    cold = _cold_turns(columns, draws, count, transport, quantities, excess)
    sums = rollout_sum(quantities, count, cold.probability) + _later_excess(count, cold, excess)
    no = np.zeros(columns.points, dtype=bool)
    residency = columns.kv_cache.residency[:, 0] > 0
    approximations = _approximations(
        transport, cold, excess.approximate, draws.parallel, no, residency
    )
    return _expectations(sums, count, cold, approximations)


def _expectations(
    sums: np.ndarray,
    count: TurnCount,
    cold: ColdTurns,
    approximations: tuple[tuple[str, ...], ...],
) -> Expectations:
    """The results of per-rollout sums (points, QUANTITIES), either path's."""
    return Expectations(
        stage_s=sums[:, : len(STAGES)],
        turns=count.turns,
        cold_turns=_cold_turn_count(count, cold),
        ttft_sum_s=sums[:, TTFT],
        api_cpu_s=sums[:, API_CPU],
        safety_cpu_s=sums[:, SAFETY_CPU],
        cached_prompt_tokens=sums[:, CACHED],
        uncached_prompt_tokens=sums[:, UNCACHED],
        approximations=approximations,
    )


def _cold_turn_count(count: TurnCount, cold: ColdTurns) -> np.ndarray:
    """Expected connections per rollout: turn 0's, plus every later turn's it reaches."""
    later = np.where(count.index >= 1, count.reach * cold.probability, 0.0)
    return cold.probability[:, 0] + total(later)


def _quantities(
    costs: TurnCosts, work: Work, cached: np.ndarray, shape: tuple[int, ...]
) -> np.ndarray:
    """Shape (points, probes, QUANTITIES): every stage, TTFT, API and safety work, cached and
    uncached prompt tokens."""
    columns = [costs.stage_s[stage] for stage in STAGES]
    columns += [costs.ttft_s, costs.api_cpu_s, costs.safety_cpu_s]
    columns += [cached, work.prompt_tokens_uncached]
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
    out = np.zeros((count.reach.shape[0], QUANTITIES))
    out[:, STAGE_COLUMN[Stage.SAFETY]] = added
    out[:, TTFT] = added
    return out


def _approximations(
    transport: Transport,
    cold: ColdTurns,
    excess: np.ndarray,
    parallel: np.ndarray,
    compaction: np.ndarray,
    resident: np.ndarray,
) -> tuple[tuple[str, ...], ...]:
    flags = (
        (Approximation.CONNECTION_LOSS, cold.from_durations & transport.is_websocket),
        (Approximation.ROTATION_GRID, cold.on_grid),
        (Approximation.SESSION_CONNECTION, cold.session & transport.is_websocket),
        (Approximation.PARALLEL_EXCESS, excess),
        (Approximation.PREFIX_RESIDENCY, resident),
        (Approximation.PARALLEL_TOOLS, parallel),
        (Approximation.COMPACTION, compaction),
    )
    # One tuple per combination of flags that occurs, shared by the points that have it.
    zero = np.zeros((), dtype=int)
    code = sum((mask.astype(int) << bit for bit, (_, mask) in enumerate(flags)), zero).tolist()
    names = {
        combination: tuple(
            str(name) for bit, (name, _) in enumerate(flags) if combination >> bit & 1
        )
        for combination in set(code)
    }
    return tuple(names[c] for c in code)
