"""Draw the workload of the first rollouts of a block (the DES's inputs).

The streams of a block stand for all ``BLOCK_ROLLOUTS`` of its rollouts, in a
fixed order: every tool call's kind, then the first tool kind's times, then
the second's, and so on.  A run of fewer rollouts keeps only the first
rollouts' values: each stream is drawn as for the whole block, but what is not
kept is drawn chunk by chunk and dropped (``sample_prefix``), and nothing is
drawn past the last value a stream's later use needs.  So a rollout's draws do
not depend on how many rollouts a run asks for, and a small run holds only
what it keeps.  Parallel calls are the exception: the number of calls beyond
a turn's first decides where later kinds' draws start, so a run with parallel
calls draws the whole block's counts (one number per turn).
"""

from __future__ import annotations

import numpy as np

from models.distributions import SAMPLE_CHUNK
from models.distributions.choosing import choose
from models.retry_policy import http_waits_s
from models.scenario import Scenario
from models.workload import Workload, rollout_turns
from sim.des.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.turn.compaction import compact, without_compaction
from sim.turn.turns import Turns, history


def draw_turns(scenario: Scenario, block: int, rollouts: int, replication: int = 0) -> Turns:
    """Random per-turn inputs of the first ``rollouts`` rollouts of block ``block``."""
    w = scenario.workload

    def rng(kind: Draw) -> np.random.Generator:
        return stream(scenario.seed, block, kind, replication)

    every_call = w.tool_calls_per_rollout.sample(rng(Draw.TOOL_CALLS), BLOCK_ROLLOUTS)
    block_turns = int(rollout_turns(every_call).sum())
    calls = every_call[:rollouts]
    total = int(rollout_turns(calls).sum())
    output = w.output_tokens.sample_prefix(rng(Draw.OUTPUT_TOKENS), block_turns, total, False)

    cap = scenario.compaction.tool_output_cap_tokens
    tool_s, tool_output, tool_kind = _calls(
        w, rng(Draw.TOOL_KIND), rng(Draw.TOOL_TIME), rng(Draw.TOOL_OUTPUT), block_turns, total, cap
    )
    final_turns = np.cumsum(rollout_turns(calls.astype(np.int64))) - 1
    parallel = None
    if w.parallel:
        block_final = np.cumsum(rollout_turns(every_call.astype(np.int64))) - 1
        every_parallel = w.parallel_calls_per_turn.sample(rng(Draw.PARALLEL_CALLS), block_turns)
        every_parallel[block_final] = 0.0
        parallel = every_parallel[:total]
        overhead_s = scenario.client.parallel_call_overhead_ms * 1e-3
        block_extra = int(np.maximum(every_parallel - 1, 0).sum())
        tool_s, tool_output = _add_parallel_calls(
            w, parallel, tool_s, tool_output, overhead_s, rng(Draw.EXTRA_CALLS), block_extra, cap
        )
    tool_s[final_turns] = 0.0
    tool_output[final_turns] = 0.0
    tool_kind[final_turns] = -1
    grown = history(
        calls, output, tool_output, w.first_message_tokens, w.output_items_per_turn, parallel
    )
    fixed_tokens = w.instructions_tokens + w.tool_definitions_tokens
    if scenario.compaction.compacts:
        grown = compact(
            grown, output, tool_output, fixed_tokens, w.first_message_tokens, scenario.compaction
        )
    else:
        grown = {**grown, **without_compaction((total,))}

    rate = scenario.inference.decode_tps.sample_prefix(
        rng(Draw.DECODE_RATE), block_turns, total, False
    )
    hit_prob = scenario.api.render_cache_hit_prob
    render_hit = (rng(Draw.RENDER_CACHE).random(total) < hit_prob).astype(float)
    early, late, wait_s = _failures(
        scenario, rng(Draw.SERVER_ERRORS), rng(Draw.RETRY_JITTER), block_turns, total
    )
    return Turns(
        **grown,
        fixed_tokens=fixed_tokens,
        output_tokens=output,
        decode_s_per_token=1.0 / rate,
        tool_s=tool_s,
        render_hit=render_hit,
        missing_history_tokens=np.zeros(total),
        failed_early=early,
        failed_late=late,
        retry_wait_s=wait_s,
        tool_kind=tool_kind,
    )


def _calls(
    w: Workload,
    kind_rng: np.random.Generator,
    time_rng: np.random.Generator,
    output_rng: np.random.Generator,
    size: int,
    keep: int,
    cap_tokens: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Time, output tokens and kind of the first ``keep`` of ``size`` tool calls drawn from the
    mix, each output cut to ``cap_tokens`` (0: not cut).

    With one generator for all three the stream holds the kinds, then each kind's
    times and outputs in turn, so every part but the last is finished.
    """
    shared = kind_rng is time_rng
    kind, per_kind = _tool_kinds(w, kind_rng, size, keep, shared)
    tool_s = np.empty(keep)
    tool_output = np.empty(keep)
    for index, tool in enumerate(w.tools):
        chosen = np.flatnonzero(kind == index)
        later = index < len(w.tools) - 1
        drawn = int(per_kind[index])
        tool_s[chosen] = tool.time_s.sample_prefix(time_rng, drawn, chosen.size, later or shared)
        tool_output[chosen] = tool.output_tokens.sample_prefix(
            output_rng, drawn, chosen.size, later
        )
    if cap_tokens > 0:
        tool_output = np.minimum(tool_output, cap_tokens)
    return tool_s, tool_output, kind


def _add_parallel_calls(
    w: Workload,
    parallel: np.ndarray,
    first_s: np.ndarray,
    first_output: np.ndarray,
    overhead_s: float,
    rng: np.random.Generator,
    block_extra: int,
    cap_tokens: float,
) -> tuple[np.ndarray, np.ndarray]:
    """A turn's tool time is its slowest call plus the overhead of each call beyond the
    first; its output is every call's output."""
    extra = np.maximum(parallel - 1, 0).astype(np.int64)
    owner = np.repeat(np.arange(parallel.size), extra)
    extra_s, extra_output, _ = _calls(w, rng, rng, rng, block_extra, owner.size, cap_tokens)
    slowest = first_s.copy()
    np.maximum.at(slowest, owner, extra_s)
    output = first_output + np.bincount(owner, weights=extra_output, minlength=parallel.size)
    return slowest + extra * overhead_s, output


def _failures(
    scenario: Scenario,
    rng: np.random.Generator,
    jitter: np.random.Generator,
    block_turns: int,
    total: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Failed attempts per turn (geometric), each early or late in turn, and the waits the
    SDK puts after them over HTTP (``models.retry_policy``; a WebSocket turn waits none).

    The block's attempts come first in the stream, then each failure's status draw.
    """
    r = scenario.retries
    zeros = np.zeros(total)
    if r.server_error_prob == 0:
        return zeros, zeros, zeros
    failures = rng.geometric(1.0 - r.server_error_prob, total) - 1
    for start in range(total, block_turns, SAMPLE_CHUNK):
        rng.geometric(1.0 - r.server_error_prob, min(SAMPLE_CHUNK, block_turns - start))
    owner = np.repeat(np.arange(total), failures)
    early = rng.random(owner.size) < r.early_error_fraction
    waits = http_waits_s(r, early, owner, jitter.random(owner.size))
    wait_s = np.bincount(owner, weights=waits, minlength=total)
    early_count = np.bincount(owner, weights=early, minlength=total)
    return early_count, failures - early_count, wait_s


def _tool_kinds(
    w: Workload, rng: np.random.Generator, size: int, keep: int, finish: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The tool kind of each of the first ``keep`` of ``size`` calls, and each kind's count.

    The counts say where each kind's draws start in the time and output streams;
    with one kind there is nothing to count unless the stream is used after.
    """
    p = w.tool_probabilities()
    kind = choose(rng, p, keep)
    if len(w.tools) == 1 and not finish:
        return kind, np.array([size])
    per_kind = np.bincount(kind, minlength=len(w.tools))
    for start in range(keep, size, SAMPLE_CHUNK):
        chunk = choose(rng, p, min(SAMPLE_CHUNK, size - start))
        per_kind += np.bincount(chunk, minlength=len(w.tools))
    return kind, per_kind
