"""What a set of requests measured, per rollout and per request, as plain arrays.

``summarize`` and the fit both read these, so the summary shows the very numbers
the fit uses.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sim.traces.table import Request


@dataclass(frozen=True)
class Measured:
    """Arrays over the rollouts, requests and tool calls of a trace."""

    rollout_ids: list[str]
    e2e_s: np.ndarray
    """Per rollout: first request's start to the end of its last request or tool call."""
    requests_per_rollout: np.ndarray
    calls_per_rollout: np.ndarray
    calls_per_request: np.ndarray
    """Per request but the last of each rollout (the final answer calls no tool)."""
    output_tokens: np.ndarray
    """Per request where known."""
    first_input_tokens: np.ndarray
    """Per rollout where known: the first request's input tokens."""
    growth_tokens: np.ndarray
    """Per request after the first where known: its input tokens minus the previous one's."""
    tool_s: dict[str, np.ndarray]
    """Per tool name: the durations of its calls where known."""
    tool_output_tokens: dict[str, np.ndarray]
    """Per tool name: input growth after a single call less the output before it."""
    input_tokens: np.ndarray
    cached_input_tokens: np.ndarray
    ttft_s: np.ndarray
    """Per request where the first output is known."""
    ttft_input_tokens: np.ndarray
    ttft_cached_tokens: np.ndarray
    after_first_s: np.ndarray
    """Per request where known: end minus first output."""
    after_first_tokens: np.ndarray
    request_s: np.ndarray
    """Per request: end minus start."""
    transports: set[str]


def measure(requests: Sequence[Request]) -> Measured:
    """Group requests by rollout (in order) and gather every measured quantity."""
    by_rollout: dict[str, list[Request]] = defaultdict(list)
    for request in requests:
        by_rollout[request.rollout_id].append(request)
    e2e, per_rollout, calls_rollout, first_input = [], [], [], []
    calls_request: list[int] = []
    growth, tool_s, tool_out = [], defaultdict(list), defaultdict(list)
    for rollout in by_rollout.values():
        rollout.sort(key=lambda r: r.request_index)
        ends = [r.end_s for r in rollout] + [
            c.end_s for r in rollout for c in r.tool_calls if c.end_s is not None
        ]
        e2e.append(max(ends) - rollout[0].start_s)
        per_rollout.append(len(rollout))
        calls_rollout.append(sum(len(r.tool_calls) for r in rollout))
        calls_request.extend(len(r.tool_calls) for r in rollout[:-1])
        if rollout[0].input_tokens is not None:
            first_input.append(rollout[0].input_tokens)
        for before, after in itertools.pairwise(rollout):
            if before.input_tokens is None or after.input_tokens is None:
                continue
            grew = after.input_tokens - before.input_tokens
            growth.append(grew)
            if len(before.tool_calls) == 1 and before.output_tokens is not None:
                tool_out[before.tool_calls[0].tool_name].append(grew - before.output_tokens)
        for request in rollout:
            for call in request.tool_calls:
                if call.duration_s is not None:
                    tool_s[call.tool_name].append(call.duration_s)
    known = [r for r in requests if r.output_tokens is not None]
    timed = [r for r in requests if r.first_output_s is not None]
    decoded = [r for r in timed if r.output_tokens]
    with_input = [r for r in requests if r.input_tokens is not None]
    return Measured(
        rollout_ids=list(by_rollout),
        e2e_s=np.array(e2e),
        requests_per_rollout=np.array(per_rollout, dtype=float),
        calls_per_rollout=np.array(calls_rollout, dtype=float),
        calls_per_request=np.array(calls_request, dtype=float),
        output_tokens=np.array([r.output_tokens for r in known], dtype=float),
        first_input_tokens=np.array(first_input, dtype=float),
        growth_tokens=np.array(growth, dtype=float),
        tool_s={name: np.array(v) for name, v in sorted(tool_s.items())},
        tool_output_tokens={name: np.array(v, dtype=float) for name, v in sorted(tool_out.items())},
        input_tokens=np.array([r.input_tokens for r in with_input], dtype=float),
        cached_input_tokens=np.array([r.cached_input_tokens or 0 for r in with_input], dtype=float),
        ttft_s=np.array([r.ttft_s for r in timed]),
        ttft_input_tokens=np.array([r.input_tokens or 0 for r in timed], dtype=float),
        ttft_cached_tokens=np.array([r.cached_input_tokens or 0 for r in timed], dtype=float),
        after_first_s=np.array(
            [r.end_s - r.first_output_s for r in decoded if r.first_output_s is not None]
        ),
        after_first_tokens=np.array([r.output_tokens for r in decoded], dtype=float),
        request_s=np.array([r.duration_s for r in requests]),
        transports={r.transport for r in requests if r.transport is not None},
    )


@dataclass(frozen=True)
class DecodeFit:
    """Seconds after the first output as ``fixed_s + tokens / rate``: the regression's
    intercept and each request's rate with it removed."""

    fixed_s: float
    rates_tps: np.ndarray
    r_squared: float
    n: int


def decode_fit(m: Measured) -> DecodeFit | None:
    """Decode rates from (end - first output) and output tokens (None: the trace lacks them).

    The intercept of a least-squares line through (tokens, seconds) is the time
    after the first output that does not grow with the tokens (post-inference
    work, the last bytes); each request's rate is its tokens over its seconds
    less that.
    """
    tokens, seconds = m.after_first_tokens, m.after_first_s
    if tokens.size < 10 or np.ptp(tokens) == 0:
        return None
    line = stats.linregress(tokens, seconds)
    fixed_s = max(float(line.intercept), 0.0)
    decode_s = seconds - fixed_s
    keep = decode_s > 0
    return DecodeFit(fixed_s, tokens[keep] / decode_s[keep], float(line.rvalue**2), int(keep.sum()))


def percentiles(values: np.ndarray) -> dict[str, float | None]:
    """Count, mean, p50 and p95 (None when empty)."""
    if values.size == 0:
        return {"n": 0, "mean": None, "p50": None, "p95": None}
    return {
        "n": int(values.size),
        "mean": float(values.mean()),
        "p50": float(np.percentile(values, 50)),
        "p95": float(np.percentile(values, 95)),
    }
