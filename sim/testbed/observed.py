"""The rollouts a server actually made, as turns the simulation can run.

Against a server that decides for itself, the scenario's drawn turn counts are
not what happened: the simulation then runs the measured rollouts' own turns
(``sim.des.runners.simulate_turns``): their number, each request's new input and
history (items and tokens, as the client counted them), each response's output
tokens (its usage) and each tool step as it was drawn.  What a client cannot see
of the server (its decode rate, where its render cache is) keeps the scenario's
draws: the rollout's own draws for the turns the scenario drew, then draws from a
stream of the rollout's own.
"""

from __future__ import annotations

import numpy as np

from models.scenario import Scenario
from sim.des.streams import BLOCK_ROLLOUTS
from sim.testbed.records import RolloutRecord
from sim.testbed.tools import DrawnBlocks
from sim.turn.compaction import without_compaction
from sim.turn.turns import Turns

_UNSEEN_KEY = 1_001
"""Spawn key of the draws for turns the scenario did not draw (apart from the DES's kinds)."""


def observed_turns(scenario: Scenario, rollouts: list[RolloutRecord]) -> Turns:
    """The turns of ``rollouts`` (replication 0), laid end to end."""
    turns = [t for r in rollouts for t in r.turns]
    counts = [len(r.turns) for r in rollouts]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    is_last = np.zeros(len(turns))
    is_last[offsets[1:] - 1] = 1.0
    decode, render = _unseen(scenario, rollouts)
    w = scenario.workload
    column = np.array
    return Turns(
        offsets=offsets,
        turn_index=column([t.turn for t in turns], dtype=float),
        is_last=is_last,
        fixed_tokens=w.instructions_tokens + w.tool_definitions_tokens,
        new_tokens=column([t.new_tokens for t in turns]),
        prior_tokens=column([t.prior_tokens for t in turns]),
        items_new=column([t.items_new for t in turns], dtype=float),
        context_items=column([t.context_items for t in turns], dtype=float),
        output_tokens=column([t.output_tokens for t in turns]),
        decode_s_per_token=decode,
        tool_s=column(
            [0.0 if last else t.drawn_tool_s for t, last in zip(turns, is_last, strict=True)]
        ),
        render_hit=render,
        missing_history_tokens=np.zeros(len(turns)),
        failed_early=np.zeros(len(turns)),
        failed_late=np.zeros(len(turns)),
        retry_wait_s=np.zeros(len(turns)),
        **without_compaction((len(turns),)),
    )


def _unseen(scenario: Scenario, rollouts: list[RolloutRecord]) -> tuple[np.ndarray, np.ndarray]:
    """Seconds per output token and render-cache hits of every turn: the drawn rollout's
    for the turns it drew, the rest drawn from the rollout's own stream."""
    blocks = DrawnBlocks(scenario)
    decode, render = [], []
    for record in rollouts:
        drawn = blocks.of(record.rollout, 0)
        local = record.rollout % BLOCK_ROLLOUTS
        first, end = int(drawn.offsets[local]), int(drawn.offsets[local + 1])
        extra = max(0, len(record.turns) - (end - first))
        key = (record.rollout // BLOCK_ROLLOUTS, _UNSEEN_KEY, local)
        rng = np.random.Generator(
            np.random.PCG64(np.random.SeedSequence(scenario.seed, spawn_key=key))
        )
        kept = min(len(record.turns), end - first)
        rates = scenario.inference.decode_tps.sample(rng, extra) if extra else np.empty(0)
        hits = rng.random(extra) < scenario.api.render_cache_hit_prob
        decode.extend([*drawn.decode_s_per_token[first : first + kept], *(1.0 / rates)])
        render.extend([*drawn.render_hit[first : first + kept], *hits.astype(float)])
    return np.array(decode, dtype=float), np.array(render, dtype=float)
