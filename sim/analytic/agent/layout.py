"""The expected rollout: the longest one the turn-count distribution allows, each turn
weighted by the probability that a rollout reaches it.

A rollout with n tool calls (n ~ ``workload.tool_calls_per_rollout``) has turns
0 .. n.  Turn k happens with probability P(n >= k) (``reach``) and, given that
it happens, is the final answer with probability P(n = k) / P(n >= k)
(``last``).  A rollout that reaches turn k has made k tool calls before it, so
what turn k sends and holds does not depend on n: one layout of expected turns
serves every value of n, and only what differs on the last turn (no tool, the
``ws-append`` post-inference work) enters through ``last``.

Within a rollout every per-turn input of the expected layout is affine in the
turn number k and in ``last`` (the context grows by one expected output and
one expected tool output per turn), and every cost is linear in the work
(``models/costs.py``), so a cost of turn k >= 1 is ``A + B (k - 1) + G last``
with A, B, G read from three probe turns.  Turn 0 needs two more (it may be
last when n = 0), and three token probes give the parallel-safety margin's
coefficients (``sim.analytic.agent.excess``).  The rollout's expectation is then
exact from weighted sums over k, without evaluating every turn.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.in_place import add_to, subtract_from
from models.retry_policy import expected_failed_attempts, expected_http_wait_s
from sim.analytic.agent.columns import ObjectColumn
from sim.analytic.agent.expected_draws import ExpectedDraws
from sim.turn.compaction import without_compaction
from sim.turn.turns import Turns, history

PROBE_TURN = np.array([0, 0, 1, 2, 1, 1, 1, 1])
"""Turn number of each probe: turn 0 (not last, last), turn 1, turn 2, turn 1 last, then
three token probes (turn 1 with chosen new and prior tokens, for the safety margin)."""
PROBE_LAST = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
FIRST, FIRST_LAST, SECOND, THIRD, SECOND_LAST = range(5)
TOKEN_PROBES = [5, 6, 7]
STEP_TOKENS = 1e4
"""(new, prior) tokens of the token probes: (0, 0), (step, 0), (0, step)."""


@dataclass(frozen=True)
class TurnCount:
    """The turn-count distribution as the layout uses it, shape (points, longest rollout)."""

    reach: np.ndarray
    """P(the rollout reaches turn k); 0 past a point's longest rollout."""
    last: np.ndarray
    """P(turn k is the last | it is reached); 1 past a point's longest rollout."""

    @property
    def turns(self) -> np.ndarray:
        """Expected turns per rollout, shape (points,)."""
        return total(self.reach)

    @property
    def index(self) -> np.ndarray:
        """The turn number k of each column."""
        return np.arange(self.reach.shape[1])


def turn_count(calls: ObjectColumn[Any]) -> TurnCount:
    """Reach and last-turn probabilities of each point's tool-call distribution."""
    tables = [_reach_and_last(distribution) for distribution in calls.values]
    longest = max(reach.size for reach, _ in tables)
    reach = np.zeros((len(tables), longest))
    last = np.ones((len(tables), longest))
    for row, (r, q) in enumerate(tables):
        reach[row, : r.size] = r
        last[row, : q.size] = q
    if len(tables) == 1:  # every point's: one row, read as every point's (held once)
        shape = (calls.points, longest)
        return TurnCount(reach=np.broadcast_to(reach, shape), last=np.broadcast_to(last, shape))
    return TurnCount(reach=reach[calls.index], last=last[calls.index])


def _reach_and_last(calls: Any) -> tuple[np.ndarray, np.ndarray]:
    values, probability = calls.support()
    pmf = np.bincount(values.astype(np.int64), weights=probability)
    reach = np.cumsum(pmf[::-1])[::-1]
    # Values of probability zero past the longest rollout are never reached: last is 1 there.
    return reach, np.divide(pmf, reach, out=np.ones_like(pmf), where=reach > 0)


def expected_turns(
    columns: Any,
    draws: ExpectedDraws,
    turn_index: np.ndarray,
    is_last: np.ndarray,
) -> Turns:
    """Expected inputs of turns ``turn_index`` of a rollout that reaches them.

    ``is_last`` (broadcasting against (points, turns)) is the probability that
    each is the final answer: no tool then.  Every draw is at its mean, the
    decode time per token at E[1 / rate], the render-cache hit at its probability,
    every history held by its replica (``sim.analytic.agent.turn_table`` adds what is not).
    """
    w = columns.workload
    points, turns = columns.points, int(turn_index.max()) + 1
    parallel = None
    if draws.parallel.any():
        parallel = np.broadcast_to(draws.mean_parallel_calls, (points, turns))
    grown = history(
        np.array([turns - 1]),
        np.broadcast_to(draws.mean_output_tokens, (points, turns)),
        np.broadcast_to(draws.mean_tool_output_tokens, (points, turns)),
        w.first_message_tokens,
        w.output_items_per_turn,
        parallel,
    )
    shape = (points, turn_index.size)
    last = np.broadcast_to(is_last, shape)
    prior_tokens = grown["prior_tokens"][:, turn_index]
    items_new = np.ones(turn_index.size)
    if parallel is not None:
        items_new = np.broadcast_to(grown["items_new"], (points, turns))[:, turn_index]
    r = columns.retries
    failed = expected_failed_attempts(r.server_error_prob)
    return Turns(
        offsets=np.array([0, turn_index.size]),
        turn_index=turn_index.astype(float),
        is_last=last,
        fixed_tokens=w.instructions_tokens + w.tool_definitions_tokens,
        new_tokens=grown["new_tokens"][:, turn_index],
        prior_tokens=prior_tokens,
        items_new=items_new,
        context_items=np.broadcast_to(grown["context_items"], (points, turns))[:, turn_index],
        output_tokens=draws.mean_output_tokens,
        decode_s_per_token=draws.decode_s_per_token,
        tool_s=(1.0 - last) * draws.mean_tool_s,
        render_hit=columns.api.render_cache_hit_prob,
        missing_history_tokens=np.zeros(shape),
        failed_early=failed * r.early_error_fraction,
        failed_late=failed * (1.0 - r.early_error_fraction),
        retry_wait_s=expected_http_wait_s(r, r.server_error_prob),
        **without_compaction(shape),
    )


def probe_turns(columns: Any, draws: ExpectedDraws) -> Turns:
    """The probe turns (``PROBE_TURN``, ``PROBE_LAST``, ``TOKEN_PROBES``) of every point."""
    turns = expected_turns(columns, draws, PROBE_TURN, PROBE_LAST)
    new_tokens, prior_tokens = turns.new_tokens.copy(), turns.prior_tokens.copy()
    new_tokens[:, TOKEN_PROBES] = [0.0, STEP_TOKENS, 0.0]
    prior_tokens[:, TOKEN_PROBES] = [0.0, 0.0, STEP_TOKENS]
    return dataclasses.replace(turns, new_tokens=new_tokens, prior_tokens=prior_tokens)


def total(values: np.ndarray) -> np.ndarray:
    """Sum over the turn axis, added in turn order (a point's sum does not depend on the
    batch: padding past its longest rollout adds exact zeros).

    Reduced over a turn-major copy: numpy then adds whole turns one after another (from
    -0.0, which adds nothing), where a reduction along each point's row would add in
    pairs and a running sum would write every partial sum.
    """
    if values.shape[0] < 2:
        return np.cumsum(values, axis=1)[:, -1]
    if values.strides[0] == 0:  # every point's row is one row: its sum, once
        return np.repeat(total(values[:1]), values.shape[0])
    return np.add.reduce(np.asfortranarray(values), axis=1, initial=-0.0)


def rollout_sum(
    probes: np.ndarray, count: TurnCount, cold: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Expected sum over a rollout of a per-turn quantity given at the probe turns.

    ``probes`` has shape (points, probes, quantities) for the cold and the warm
    variant stacked on a leading axis of 2; ``cold`` is P(turn k is cold | it
    is reached), shape (points, turns); 1 at turn 0 unless the agent keeps its
    connection across rollouts; ``weights`` are ``later_weights(count, cold)``.
    Returns (points, quantities), or one row when nothing in it varies.
    """
    first_cold, first_warm = (
        variant[:, FIRST] + count.last[:, :1] * (variant[:, FIRST_LAST] - variant[:, FIRST])
        for variant in probes
    )
    # first_cold + (1 - cold_0) (first_warm - first_cold), then each variant's
    # level w + slope w (k - 1) + last_turn w last added term by term.
    out = add_to(first_cold, (1.0 - cold[:, :1]) * subtract_from(first_warm, first_cold))
    for variant, (weight, weight_steps, weight_last) in zip(probes, weights, strict=True):
        level = variant[:, SECOND]
        slope = variant[:, THIRD] - level
        last_turn = variant[:, SECOND_LAST] - level
        term = level * weight[:, None]
        out = add_to(out, term)
        out = add_to(out, np.multiply(slope, weight_steps[:, None], out=term))
        out = add_to(out, np.multiply(last_turn, weight_last[:, None], out=term))
    return out


def later_weights(count: TurnCount, cold: np.ndarray) -> np.ndarray:
    """Per variant (cold, warm) the sums over turns k >= 1 of w = reach x share (``cold``
    or 1 - ``cold``), of w (k - 1) and of w last, shape (2, 3, points): what ``rollout_sum``
    weights the probes' level, slope and last-turn term by (points is 1 when the count and
    ``cold`` are each held once, ``sim.analytic.agent.varying``).

    The six are laid out turn-major in one array and reduced together, in turn order as
    ``total`` adds.
    """
    points, turns = np.broadcast_shapes(count.reach.shape, cold.shape)  # either held once
    weights = np.empty((2, 3, turns, points))
    steps = np.maximum(count.index - 1, 0)[:, None]
    for variant, share in enumerate((cold.T, 1.0 - cold.T)):
        weight, weight_steps, weight_last = weights[variant]
        np.multiply(count.reach.T, share, out=weight)
        weight[0] = 0.0
        np.multiply(weight, steps, out=weight_steps)
        np.multiply(weight, count.last.T, out=weight_last)
    if points < 2:
        return np.cumsum(weights, axis=2)[:, :, -1]
    return np.add.reduce(weights, axis=2, initial=-0.0)


def per_turn(probes: np.ndarray, count: TurnCount, cold: np.ndarray) -> np.ndarray:
    """Expected quantities of each turn k given that it is reached, shape (points, turns,
    quantities): the terms ``rollout_sum`` weights by the reach and adds (the same affine
    rule, turn by turn)."""
    cold_probes, warm_probes = probes
    first_cold, first_warm = (
        variant[:, FIRST] + count.last[:, :1] * (variant[:, FIRST_LAST] - variant[:, FIRST])
        for variant in probes
    )
    steps = np.maximum(count.index - 1, 0)[None, :, None]
    out = np.zeros((*count.reach.shape, probes.shape[-1]))
    for variant, share in ((cold_probes, cold), (warm_probes, 1.0 - cold)):
        level = variant[:, SECOND, None]
        slope = variant[:, THIRD, None] - level
        last_turn = variant[:, SECOND_LAST, None] - level
        out += share[..., None] * (level + slope * steps + last_turn * count.last[..., None])
    out[:, 0] = first_cold + (1.0 - cold[:, :1]) * (first_warm - first_cold)
    return out
