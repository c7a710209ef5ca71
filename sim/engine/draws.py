"""Draw the workload of a block of rollouts (the DES's inputs)."""

from __future__ import annotations

import numpy as np

from models.scenario import Scenario
from sim.engine.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.engine.turns import Turns, history


def draw_turns(scenario: Scenario, block: int, rollouts: int, replication: int = 0) -> Turns:
    """Random per-turn inputs of the first ``rollouts`` rollouts of block ``block``.

    A whole block is always drawn, so a rollout's draws do not depend on how
    many rollouts a run asks for.
    """
    return _draw_block(scenario, block, replication).head(rollouts)


def _draw_block(scenario: Scenario, block: int, replication: int) -> Turns:
    rollouts = BLOCK_ROLLOUTS
    w = scenario.workload

    def rng(kind: Draw) -> np.random.Generator:
        return stream(scenario.seed, block, kind, replication)

    calls = w.tool_calls_per_rollout.sample(rng(Draw.TOOL_CALLS), rollouts)
    total = int(calls.sum()) + rollouts
    output = w.output_tokens.sample(rng(Draw.OUTPUT_TOKENS), total)

    kind = rng(Draw.TOOL_KIND).choice(len(w.tools), total, p=w.tool_probabilities())
    time_rng = rng(Draw.TOOL_TIME)
    output_rng = rng(Draw.TOOL_OUTPUT)
    tool_s = np.empty(total)
    tool_output = np.empty(total)
    for index, tool in enumerate(w.tools):
        chosen = np.flatnonzero(kind == index)
        tool_s[chosen] = tool.time_s.sample(time_rng, chosen.size)
        tool_output[chosen] = tool.output_tokens.sample(output_rng, chosen.size)

    final_turns = np.cumsum(calls.astype(np.int64) + 1) - 1
    tool_s[final_turns] = 0.0
    tool_output[final_turns] = 0.0
    grown = history(calls, output, tool_output, w.first_message_tokens, w.output_items_per_turn)

    rate = scenario.inference.decode_tps.sample(rng(Draw.DECODE_RATE), total)
    hit_prob = scenario.api.render_cache_hit_prob
    render_hit = (rng(Draw.RENDER_CACHE).random(total) < hit_prob).astype(float)
    return Turns(
        **grown,
        fixed_tokens=w.instructions_tokens + w.tool_definitions_tokens,
        output_tokens=output,
        decode_s_per_token=1.0 / rate,
        tool_s=tool_s,
        render_hit=render_hit,
        missing_history_tokens=np.zeros(total),
    )
