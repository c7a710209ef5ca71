"""The analytic engine's per-turn path, for rollouts whose history is compacted.

Compaction at random turns breaks the layout's shortcut (every input affine in
the turn number), so every turn k of the longest rollout is evaluated: its
inputs given a compaction before it or not come from the history's law
(``sim.analytic.agent.context_grid``), the costs are linear in them, and the turn's
expected quantities mix the two by P(compaction before turn k).  Cold and warm
turns mix as in the layout's path, by the probability that the connection is
new (``sim.analytic.agent.connection_loss``).  The parallel-safety excess and the
compaction request's own are taken at each variant's expected inputs (exact
when the excess is provably zero, as in the presets).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.costs import TurnCosts, stage_costs
from models.stages import STAGE_COLUMN, STAGES, Stage
from models.work import Work
from sim.analytic.agent.connection_loss import ColdTurns, keep_alive, websocket
from sim.analytic.agent.context_grid import ContextLaw, context_law
from sim.analytic.agent.expected_draws import ExpectedDraws, expected_draws
from sim.analytic.agent.layout import TurnCount, expected_turns, turn_count
from sim.analytic.agent.tool_overlap import expected_hidden_post_s
from sim.turn.transports import Transport, cached_prompt_tokens, compaction_work, turn_work
from sim.turn.turns import Turns

_REQUEST = [STAGE_COLUMN[s] for s in STAGES if s is not Stage.TOOL]


@dataclass(frozen=True)
class Compacting:
    """The rollout's sums and its turns given they are reached, every history held."""

    sums: np.ndarray
    """Expected per-rollout sums of every stage, TTFT, API and safety work, cached and
    uncached prompt tokens, shape (points, stages + 5)."""
    per_turn: np.ndarray
    """The same per turn given it is reached, shape (points, turns, stages + 5)."""
    count: TurnCount
    cold: ColdTurns
    prior_tokens: np.ndarray
    history_tokens: np.ndarray


def compacting_sums(columns: Any, transport: Transport) -> Compacting:
    """The expected rollout of every point of ``columns``, turn by turn."""
    draws = expected_draws(columns)
    count = turn_count(draws.tool_calls)
    turns = expected_turns(columns, draws, count.index, count.last)
    law = _laws(columns, draws, count.index.size)
    kept, compacted = _variants(turns, law)
    share = law.compacted
    hidden_s = expected_hidden_post_s(columns, draws) * (1.0 - turns.is_last)
    mixed = []
    for kept_work, compacted_work, request in zip(
        turn_work(columns, transport, kept),
        turn_work(columns, transport, compacted),
        compaction_work(columns, transport, compacted),
        strict=True,
    ):
        plain = _quantities(
            stage_costs(columns, kept_work, post_hidden_s=hidden_s),
            kept_work,
            cached_prompt_tokens(columns, kept),
        )
        after = _quantities(
            stage_costs(columns, compacted_work, post_hidden_s=hidden_s, compaction=request),
            compacted_work,
            cached_prompt_tokens(columns, compacted),
        )
        mixed.append(plain + share[..., None] * (after - plain))
    cold = _cold(columns, draws, count, transport, mixed)
    weight = count.reach * cold.probability
    per_turn = weight[..., None] * mixed[0] + (count.reach - weight)[..., None] * mixed[1]
    given = cold.probability[..., None] * mixed[0] + (1.0 - cold.probability[..., None]) * mixed[1]
    prior = (1.0 - share) * law.prior_tokens
    context = prior + share * law.compacted_tokens + (1.0 - share) * law.new_tokens
    return Compacting(
        sums=np.cumsum(per_turn, axis=1)[:, -1],
        per_turn=given,
        count=count,
        cold=cold,
        prior_tokens=prior,
        history_tokens=context + turns.output_tokens,
    )


def _laws(columns: Any, draws: ExpectedDraws, turns: int) -> ContextLaw:
    """The history's law of every point, stacked on a leading axis (points, turns)."""
    w, c = columns.workload, columns.compaction
    fixed = w.instructions_tokens + w.tool_definitions_tokens
    added = w.output_items_per_turn - 1.0 + 2.0 * draws.mean_parallel_calls
    laws = []
    for point in range(columns.points):
        laws.append(
            context_law(
                draws.output_tokens.values[draws.output_tokens.index[point]],
                draws.tool_output_tokens.values[draws.tool_output_tokens.index[point]],
                turns,
                float(fixed[point, 0]),
                float(w.first_message_tokens[point, 0]),
                float(c.summary_tokens[point, 0]),
                float(c.threshold_tokens[point, 0]),
                float(added[point, 0]),
            )
        )
    return ContextLaw(
        **{
            name: np.stack([getattr(law, name) for law in laws])
            for name in ContextLaw.__dataclass_fields__
        }
    )


def _variants(turns: Turns, law: ContextLaw) -> tuple[Turns, Turns]:
    """The expected turns given no compaction before them, and given one (a new chain: no
    history to find on the replica)."""
    zeros, ones = np.zeros(turns.shape), np.ones(turns.shape)
    items_new = np.broadcast_to(turns.items_new, turns.shape)
    kept = dataclasses.replace(
        turns,
        prior_tokens=law.prior_tokens,
        new_tokens=law.new_tokens,
        context_items=law.context_items,
    )
    compacted = dataclasses.replace(
        turns,
        prior_tokens=zeros,
        new_tokens=law.compacted_tokens,
        context_items=law.compacted_items,
        items_new=law.compacted_items,
        missing_history_tokens=zeros,
        compacted=ones,
        compaction_prior_tokens=law.request_prior_tokens,
        compaction_new_tokens=law.request_new_tokens,
        compaction_context_items=law.request_items,
        compaction_items_new=items_new,
    )
    return kept, compacted


def _cold(
    columns: Any,
    draws: ExpectedDraws,
    count: TurnCount,
    transport: Transport,
    mixed: list[np.ndarray],
) -> ColdTurns:
    if not transport.is_websocket:
        return keep_alive(columns, draws, count)
    decode = STAGE_COLUMN[Stage.DECODE]
    cold_s, warm_s = (q[..., _REQUEST].sum(axis=-1) - q[..., decode] for q in mixed)
    return websocket(columns, draws, count, cold_s, warm_s)


def _quantities(costs: TurnCosts, work: Work, cached: np.ndarray) -> np.ndarray:
    """Shape (points, turns, stages + 5): every stage, TTFT, API and safety work, cached and
    uncached prompt tokens."""
    columns = [costs.stage_s[stage] for stage in STAGES]
    columns += [costs.ttft_s, costs.api_cpu_s, costs.safety_cpu_s]
    columns += [cached, work.prompt_tokens_uncached]
    shape = np.broadcast_shapes(*(np.shape(c) for c in columns))
    return np.stack([np.broadcast_to(c, shape) for c in columns], axis=-1)
