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

from models.costs import stage_costs
from models.in_place import add_to
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analytic.agent.columns import column_form, take_points
from sim.analytic.agent.compacting import compacting_sums
from sim.analytic.agent.connection_loss import ColdTurns, keep_alive, websocket
from sim.analytic.agent.excess import Excess, parallel_excess
from sim.analytic.agent.expectations import Expectation, Expectations, stitch
from sim.analytic.agent.expected_draws import expected_draws
from sim.analytic.agent.layout import (
    FIRST,
    PROBE_LAST,
    SECOND,
    THIRD,
    TurnCount,
    expected_turns,
    per_turn,
    probe_turns,
    turn_count,
)
from sim.analytic.agent.prefix_survival import single_agent_missing
from sim.analytic.agent.probe_quantities import ProbeQuantities
from sim.analytic.agent.rollout_results import (
    approximation_flags,
    expectations_of,
    later_excess,
    later_excess_per_turn,
)
from sim.analytic.agent.tool_overlap import expected_hidden_post_s
from sim.analytic.agent.turn_table import TurnParts, TurnTable, with_missing
from sim.analytic.agent.varying import SharedColumns, fields_held_once, held_once
from sim.turn.transports import Transport, cached_prompt_tokens, turn_work

_REQUEST = [STAGE_COLUMN[s] for s in STAGES if s is not Stage.TOOL]
BLOCK_POINTS = 4096
"""Points evaluated together at most; a larger column form is evaluated block by block."""


def expect(
    scenario: Scenario, transport: Transport, missing_tokens: np.ndarray | None = None
) -> Expectation:
    """Expected per-rollout budget of ``scenario`` under ``transport``; ``missing_tokens``,
    when given, is each turn's expected history its replica no longer holds (a fleet's, in
    place of the single agent's; ``sim.analytic.agent.turn_table``)."""
    missing = None if missing_tokens is None else np.asarray(missing_tokens)[None, :]
    return expect_columns(column_form([scenario]), transport, missing).point(0)


def expect_many(scenarios: Sequence[Scenario], transport: Transport) -> list[Expectation]:
    """``expect`` of every scenario, evaluated together (the same values, bit for bit)."""
    return expect_columns(column_form(scenarios), transport).points()


def expect_turns(scenario: Scenario, transport: Transport) -> TurnTable:
    """Each turn's expected quantities and tokens given that it is reached, every history
    held (the inputs of the residency and rate-limit models)."""
    columns = column_form([scenario])
    return _parts(columns, transport).table(0, expected_draws(columns))


def expect_columns(
    columns: Any, transport: Transport, missing_tokens: np.ndarray | None = None
) -> Expectations:
    """Expected per-rollout budget of every point of ``columns`` (a column form).  With KV
    residency each turn re-prefills the history its replica no longer holds:
    ``missing_tokens`` (points, turns) when given, else the single agent's
    (``sim.analytic.agent.prefix_survival``)."""
    if columns.points > BLOCK_POINTS:
        # A point's results do not depend on its batch; blocks keep the (points, turns)
        # temporaries small enough for the allocator to reuse rather than map afresh.
        blocks = np.array_split(np.arange(columns.points), -(-columns.points // BLOCK_POINTS))
        held = [None if missing_tokens is None else missing_tokens[rows] for rows in blocks]
        done = [
            (rows, expect_columns(take_points(columns, rows), transport, block_held))
            for rows, block_held in zip(blocks, held, strict=True)
        ]
        return stitch(done, columns.points)
    parts = _parts(columns, transport)
    residency = columns.kv_cache.residency[:, 0] > 0
    if not residency.any():
        return parts.expectations
    draws = expected_draws(columns)
    tables = [parts.table(point, draws) for point in range(columns.points)]
    missing = []
    for point, table in enumerate(tables):
        if not residency[point]:
            missing.append(np.zeros_like(table.reach))
        elif missing_tokens is not None:
            missing.append(np.asarray(missing_tokens[point], dtype=float)[: table.reach.size])
        else:
            missing.append(single_agent_missing(columns, point, transport, table))
    return with_missing(parts.expectations, tables, missing, columns)


def _parts(columns: Any, transport: Transport) -> TurnParts:
    """Every point's expectation and its turns, every history held."""
    compacting = columns.compaction.threshold_tokens[:, 0] > 0
    if not compacting.any():
        return _expect_uncompacted(columns, transport)
    pieces = [
        (rows, method(take_points(columns, rows), transport))
        for rows, method in (
            (np.flatnonzero(~compacting), _expect_uncompacted),
            (np.flatnonzero(compacting), _expect_compacting),
        )
        if rows.size
    ]
    return TurnParts.stitch(pieces, columns.points)


def _expect_compacting(columns: Any, transport: Transport) -> TurnParts:
    draws = expected_draws(columns)
    compacted = compacting_sums(columns, transport)
    no = np.zeros(columns.points, dtype=bool)
    residency = columns.kv_cache.residency[:, 0] > 0
    flags = approximation_flags(transport, compacted.cold, no, draws.parallel, ~no, residency)
    expectations = expectations_of(compacted.sums, compacted.count, compacted.cold, flags)
    return TurnParts(
        expectations,
        lambda: compacted.per_turn,
        compacted.count,
        compacted.cold.probability,
        lambda: (compacted.prior_tokens, compacted.history_tokens),
    )


def _expect_uncompacted(columns: Any, transport: Transport) -> TurnParts:
    draws = expected_draws(columns)
    count = turn_count(draws.tool_calls)
    # The probes' work and stage costs read each input that does not vary once.
    shared: Any = SharedColumns(columns)  # read as the column form is
    probes = fields_held_once(probe_turns(columns, draws))
    work = turn_work(shared, transport, probes)
    excess = parallel_excess(columns, draws, count, work, shared)
    cached = cached_prompt_tokens(shared, probes)
    hidden_s = held_once(expected_hidden_post_s(columns, draws)) * (1.0 - PROBE_LAST)
    # Both variants' quantities, those every point holds alike once.
    variants = [
        (stage_costs(shared, w, parallel_excess_s=e, post_hidden_s=hidden_s), w)
        for w, e in zip(work, excess.at_probes, strict=True)
    ]
    quantities = ProbeQuantities.of(variants, cached, columns.points, PROBE_LAST.size)
    cold = _cold_turns(columns, draws, count, transport, quantities, excess)
    # The turn weights are summed once when no point's differ (over HTTP in a sweep of rates).
    weights = fields_held_once(count), held_once(cold.probability)
    sums = quantities.rollout_sum(*weights) + later_excess(count, cold, excess)
    no = np.zeros(columns.points, dtype=bool)
    residency = columns.kv_cache.residency[:, 0] > 0
    approximations = approximation_flags(
        transport, cold, excess.approximate, draws.parallel, no, residency
    )

    def turns() -> np.ndarray:
        return per_turn(quantities.whole(), count, cold.probability) + later_excess_per_turn(
            cold, excess
        )

    def tokens() -> tuple[np.ndarray, np.ndarray]:
        laid = expected_turns(columns, draws, count.index, count.last)
        history = laid.context_tokens + laid.output_tokens
        return (
            np.broadcast_to(laid.prior_tokens, count.reach.shape),
            np.broadcast_to(history, count.reach.shape),
        )

    return TurnParts(
        expectations_of(sums, count, cold, approximations),
        turns,
        count,
        cold.probability,
        tokens,
    )


def _cold_turns(
    columns: Any,
    draws: Any,
    count: TurnCount,
    transport: Transport,
    quantities: ProbeQuantities,
    excess: Excess,
) -> ColdTurns:
    if not transport.is_websocket:
        return keep_alive(columns, draws, count)
    # A turn's duration without decode and tool, when it is not the last turn (the
    # chain follows rollouts that go on), affine in k from the probes (the three it reads),
    # the stages added one after another, as a sum over them adds.
    probes = [FIRST, SECOND, THIRD]
    request_s = quantities.at(probes, _REQUEST[0]) + quantities.at(probes, _REQUEST[1])
    for q in _REQUEST[2:]:
        request_s = add_to(request_s, quantities.at(probes, q))
    request_s = request_s - quantities.at(probes, STAGE_COLUMN[Stage.DECODE])
    request_s = np.broadcast_to(request_s, (*request_s.shape[:2], columns.points))
    k = count.index
    parts = []
    for (first, second, third), later in zip(request_s, excess.later, strict=True):
        level, slope = second[:, None], (third - second)[:, None]
        affine = np.where(k == 0, first[:, None], level + slope * np.maximum(k - 1, 0))
        parts.append(affine + later)
    return websocket(columns, draws, count, parts[0], parts[1])
