"""Draw the workload of a block of rollouts (the DES's inputs)."""

from __future__ import annotations

import numpy as np

from models.retry_policy import wait_after_failure_s
from models.scenario import Scenario
from models.workload import Workload
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

    tool_s, tool_output = _calls(
        w, rng(Draw.TOOL_KIND), rng(Draw.TOOL_TIME), rng(Draw.TOOL_OUTPUT), total
    )
    final_turns = np.cumsum(calls.astype(np.int64) + 1) - 1
    parallel = None
    if w.parallel:
        parallel = w.parallel_calls_per_turn.sample(rng(Draw.PARALLEL_CALLS), total)
        parallel[final_turns] = 0.0
        overhead_s = scenario.client.parallel_call_overhead_ms * 1e-3
        tool_s, tool_output = _add_parallel_calls(
            w, parallel, tool_s, tool_output, overhead_s, rng(Draw.EXTRA_CALLS)
        )
    tool_s[final_turns] = 0.0
    tool_output[final_turns] = 0.0
    grown = history(
        calls, output, tool_output, w.first_message_tokens, w.output_items_per_turn, parallel
    )

    rate = scenario.inference.decode_tps.sample(rng(Draw.DECODE_RATE), total)
    hit_prob = scenario.api.render_cache_hit_prob
    render_hit = (rng(Draw.RENDER_CACHE).random(total) < hit_prob).astype(float)
    early, late, wait_s = _failures(
        scenario, rng(Draw.SERVER_ERRORS), rng(Draw.RETRY_JITTER), total
    )
    return Turns(
        **grown,
        fixed_tokens=w.instructions_tokens + w.tool_definitions_tokens,
        output_tokens=output,
        decode_s_per_token=1.0 / rate,
        tool_s=tool_s,
        render_hit=render_hit,
        failed_early=early,
        failed_late=late,
        retry_wait_s=wait_s,
    )


def _calls(
    w: Workload,
    kind_rng: np.random.Generator,
    time_rng: np.random.Generator,
    output_rng: np.random.Generator,
    count: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Time and output tokens of ``count`` tool calls drawn from the tool mix."""
    kind = kind_rng.choice(len(w.tools), count, p=w.tool_probabilities())
    tool_s = np.empty(count)
    tool_output = np.empty(count)
    for index, tool in enumerate(w.tools):
        chosen = np.flatnonzero(kind == index)
        tool_s[chosen] = tool.time_s.sample(time_rng, chosen.size)
        tool_output[chosen] = tool.output_tokens.sample(output_rng, chosen.size)
    return tool_s, tool_output


def _add_parallel_calls(
    w: Workload,
    parallel: np.ndarray,
    first_s: np.ndarray,
    first_output: np.ndarray,
    overhead_s: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """A turn's tool time is its slowest call plus the overhead of each call beyond the
    first; its output is every call's output."""
    extra = np.maximum(parallel - 1, 0).astype(np.int64)
    owner = np.repeat(np.arange(parallel.size), extra)
    extra_s, extra_output = _calls(w, rng, rng, rng, owner.size)
    slowest = first_s.copy()
    np.maximum.at(slowest, owner, extra_s)
    output = first_output + np.bincount(owner, weights=extra_output, minlength=parallel.size)
    return slowest + extra * overhead_s, output


def _failures(
    scenario: Scenario, rng: np.random.Generator, jitter: np.random.Generator, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Failed attempts per turn (geometric), split by the status mix, and the waits after them."""
    r = scenario.retries
    zeros = np.zeros(count)
    if r.server_error_prob == 0:
        return zeros, zeros, zeros
    failures = rng.geometric(1.0 - r.server_error_prob, count) - 1
    early = rng.binomial(failures, r.early_error_fraction).astype(float)
    owner = np.repeat(np.arange(count), failures)
    position = np.arange(owner.size) - np.repeat(np.cumsum(failures) - failures, failures)
    waits = wait_after_failure_s(r, position, jitter.random(owner.size))
    wait_s = np.bincount(owner, weights=waits, minlength=count)
    return early, failures - early, wait_s
