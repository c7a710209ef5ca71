"""Draw the workload of the first rollouts of a block (the DES's inputs).

The streams of a block stand for all ``BLOCK_ROLLOUTS`` of its rollouts, in a
fixed order: every tool call's kind, then the first tool kind's times, then
the second's, and so on.  A run of fewer rollouts keeps only the first
rollouts' values: each stream is drawn as for the whole block, but what is not
kept is drawn chunk by chunk and dropped (``sample_prefix``), and nothing is
drawn past the last value a stream's later use needs.  So a rollout's draws do
not depend on how many rollouts a run asks for, and a small run holds only
what it keeps.
"""

from __future__ import annotations

import numpy as np

from models.distributions import SAMPLE_CHUNK
from models.scenario import Scenario
from sim.engine.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.engine.turns import Turns, history


def draw_turns(scenario: Scenario, block: int, rollouts: int, replication: int = 0) -> Turns:
    """Random per-turn inputs of the first ``rollouts`` rollouts of block ``block``."""
    w = scenario.workload

    def rng(kind: Draw) -> np.random.Generator:
        return stream(scenario.seed, block, kind, replication)

    every_call = w.tool_calls_per_rollout.sample(rng(Draw.TOOL_CALLS), BLOCK_ROLLOUTS)
    block_turns = int(every_call.sum()) + BLOCK_ROLLOUTS
    calls = every_call[:rollouts]
    total = int(calls.sum()) + rollouts
    output = w.output_tokens.sample_prefix(rng(Draw.OUTPUT_TOKENS), block_turns, total, False)

    kind, per_kind = _tool_kinds(scenario, rng(Draw.TOOL_KIND), block_turns, total)
    time_rng = rng(Draw.TOOL_TIME)
    output_rng = rng(Draw.TOOL_OUTPUT)
    tool_s = np.empty(total)
    tool_output = np.empty(total)
    for index, tool in enumerate(w.tools):
        chosen = np.flatnonzero(kind == index)
        later = index < len(w.tools) - 1
        drawn = int(per_kind[index])
        tool_s[chosen] = tool.time_s.sample_prefix(time_rng, drawn, chosen.size, later)
        tool_output[chosen] = tool.output_tokens.sample_prefix(
            output_rng, drawn, chosen.size, later
        )

    final_turns = np.cumsum(calls.astype(np.int64) + 1) - 1
    tool_s[final_turns] = 0.0
    tool_output[final_turns] = 0.0
    grown = history(calls, output, tool_output, w.first_message_tokens, w.output_items_per_turn)

    rate = scenario.inference.decode_tps.sample_prefix(
        rng(Draw.DECODE_RATE), block_turns, total, False
    )
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


def _tool_kinds(
    scenario: Scenario, rng: np.random.Generator, block_turns: int, total: int
) -> tuple[np.ndarray, np.ndarray]:
    """The tool kind of each of the first ``total`` turns, and each kind's count in the block.

    The counts say where each kind's draws start in the time and output streams;
    with one kind there is nothing to count.
    """
    tools = scenario.workload.tools
    p = scenario.workload.tool_probabilities()
    kind = rng.choice(len(tools), total, p=p)
    if len(tools) == 1:
        return kind, np.array([block_turns])
    per_kind = np.bincount(kind, minlength=len(tools))
    for start in range(total, block_turns, SAMPLE_CHUNK):
        chunk = rng.choice(len(tools), min(SAMPLE_CHUNK, block_turns - start), p=p)
        per_kind += np.bincount(chunk, minlength=len(tools))
    return kind, per_kind
