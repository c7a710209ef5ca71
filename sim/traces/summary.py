"""``loopbudget trace summarize``: what a trace says about the agent, as rows and as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.traces.measures import decode_fit, measure, percentiles
from sim.traces.report import ReadReport
from sim.traces.table import Request


def summarize(requests: Sequence[Request], reports: Sequence[ReadReport]) -> dict[str, Any]:
    """Counts and distributions of the requests; None (null in JSON) where the trace lacks it."""
    m = measure(requests)
    decode = decode_fit(m)
    input_total = float(m.input_tokens.sum())
    return {
        "files": [r.to_json() for r in reports],
        "rollouts": len(m.rollout_ids),
        "requests": len(requests),
        "transports": sorted(m.transports),
        "e2e_s": percentiles(m.e2e_s),
        "requests_per_rollout": percentiles(m.requests_per_rollout),
        "tool_calls_per_rollout": percentiles(m.calls_per_rollout),
        "tool_calls_per_request": percentiles(m.calls_per_request),
        "tool_s": {name: percentiles(v) for name, v in m.tool_s.items()},
        "output_tokens": percentiles(m.output_tokens),
        "first_input_tokens": percentiles(m.first_input_tokens),
        "history_growth_tokens_per_turn": percentiles(m.growth_tokens),
        "cached_input_share": float(m.cached_input_tokens.sum() / input_total)
        if input_total > 0
        else None,
        "ttft_s": percentiles(m.ttft_s),
        "request_s": percentiles(m.request_s),
        "decode_tps": percentiles(decode.rates_tps) if decode else percentiles(np.array([])),
        "after_first_fixed_s": decode.fixed_s if decode else None,
    }


def rows(summary: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(quantity, n, mean, p50, p95) rows for a table."""
    out: list[tuple[str, str, str, str, str]] = []

    def add(label: str, stats_: dict[str, Any], scale: float = 1.0, fmt: str = ",.4g") -> None:
        if stats_["n"] == 0:
            out.append((label, "0", "-", "-", "-"))
            return
        mean, p50, p95 = (format(stats_[k] * scale, fmt) for k in ("mean", "p50", "p95"))
        out.append((label, f"{stats_['n']:,}", mean, p50, p95))

    add("e2e per rollout (s)", summary["e2e_s"])
    add("requests per rollout", summary["requests_per_rollout"])
    add("tool calls per rollout", summary["tool_calls_per_rollout"])
    add("tool calls per request", summary["tool_calls_per_request"])
    for name, values in summary["tool_s"].items():
        add(f"tool time: {name} (s)", values)
    add("output tokens per request", summary["output_tokens"])
    add("first request's input tokens", summary["first_input_tokens"])
    add("history growth per turn (tokens)", summary["history_growth_tokens_per_turn"])
    add("request duration (s)", summary["request_s"])
    add("TTFT (ms)", summary["ttft_s"], 1e3)
    add("decode rate (tokens/s)", summary["decode_tps"])
    share = summary["cached_input_share"]
    out.append(("cached share of input", "", "-" if share is None else f"{share:.1%}", "", ""))
    return out
