"""``loopbudget fit``: a scenario whose fields come from a trace wherever it informs them.

The workload (tool calls per rollout and per response, tool mix and each tool's
time and output, output tokens per turn, the first message) and the decode
rate come from the trace's own values (``distribution_fit``); the prefill rate
from a regression of TTFT on uncached and cached input tokens when the trace
has first outputs.  What the trace cannot tell keeps the preset's value and is
listed as assumed.  Last, ``calibrate`` sets the API's stage costs so that the
scenario, on the trace's transport, gives the measured TTFT and e2e.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.errors import ScenarioError
from models.loading import raw_scenario, validate
from models.scenario import Scenario
from sim.traces.calibrate import Calibration, calibrate
from sim.traces.distribution_fit import fit_distribution
from sim.traces.measures import Measured, decode_fit, measure
from sim.traces.table import TRANSPORTS, Request

DEFAULT_PRESET = "codex-spark"

ASSUMED_ALWAYS = (
    "workload.instructions_tokens",
    "workload.tool_definitions_tokens",
    "workload.output_items_per_turn",
    "client",
    "connection",
    "kv_cache",
    "retries",
    "compaction",
    "the split of API time between its stages (validate, state load, render, route, "
    "safety, post) and the network round trip: scaled together by the calibration",
)
"""What no trace tells (without the server's own timing split), kept from the preset."""


@dataclass
class ScenarioFit:
    """The fitted scenario's table, where each field came from, and what was assumed."""

    data: dict[str, Any]
    transport: str
    sources: dict[str, str] = field(default_factory=dict)
    assumed: list[str] = field(default_factory=list)
    calibration: Calibration | None = None
    measured: Measured | None = None

    @property
    def scenario(self) -> Scenario:
        return validate(self.data)


def fit_scenario(
    requests: Sequence[Request],
    label: str,
    extends: str = DEFAULT_PRESET,
    transport: str | None = None,
    name: str = "fitted",
) -> ScenarioFit:
    """Fit a scenario to ``requests`` (read from files described by ``label``)."""
    m = measure(requests)
    chosen = _transport(m, transport)
    data = copy.deepcopy(raw_scenario(extends))
    data["name"] = name
    data["description"] = f"fitted to {label} ({len(m.rollout_ids)} rollouts), from {extends}"
    fit = ScenarioFit(data, chosen, measured=m)
    fit.assumed.extend(ASSUMED_ALWAYS)
    _workload(fit, m, label)
    _inference(fit, m, label)
    fit.calibration = calibrate(fit.data, chosen, m)
    fit.sources.update(fit.calibration.sources(label))
    return fit


def _transport(m: Measured, given: str | None) -> str:
    if given is not None:
        if given not in TRANSPORTS:
            raise ScenarioError(f"--transport = {given!r}: allowed: {', '.join(TRANSPORTS)}")
        return given
    if len(m.transports) == 1:
        return next(iter(m.transports))
    found = ", ".join(sorted(m.transports)) or "none recorded"
    raise ScenarioError(
        f"--transport: the trace does not name one transport ({found}); give --transport "
        f"(one of {', '.join(TRANSPORTS)})"
    )


def _workload(fit: ScenarioFit, m: Measured, label: str) -> None:
    w = fit.data["workload"]
    turns = m.requests_per_rollout - 1
    counts = Counter(int(t) for t in turns)
    w["tool_calls_per_rollout"] = _counted(counts)
    fit.sources["workload.tool_calls_per_rollout"] = (
        f"{label}: n = {turns.size} rollouts, requests per rollout less the final answer, "
        f"empirical (mean {turns.mean():.2f})"
    )
    calling = m.calls_per_request[m.calls_per_request > 0]
    parallel = Counter(int(c) for c in calling)
    w["parallel_calls_per_turn"] = _counted(parallel) if len(parallel) > 1 else 1
    fit.sources["workload.parallel_calls_per_turn"] = (
        f"{label}: n = {calling.size} responses with calls, calls per response, empirical"
    )
    output = fit_distribution(m.output_tokens)
    if output is not None:
        w["output_tokens"] = output.table
        fit.sources["workload.output_tokens"] = output.source(f"{label}: output tokens")
    else:
        fit.assumed.append("workload.output_tokens")
    _first_message(fit, m, label)
    _tools(fit, m, label)


def _first_message(fit: ScenarioFit, m: Measured, label: str) -> None:
    w = fit.data["workload"]
    if m.first_input_tokens.size == 0:
        fit.assumed.append("workload.first_message_tokens")
        return
    first = float(m.first_input_tokens.mean())
    fixed = float(w["instructions_tokens"]) + float(w["tool_definitions_tokens"])
    if first <= fixed:
        scale = 0.9 * first / fixed
        w["instructions_tokens"] = float(w["instructions_tokens"]) * scale
        w["tool_definitions_tokens"] = float(w["tool_definitions_tokens"]) * scale
        fixed *= scale
    w["first_message_tokens"] = first - fixed
    fit.sources["workload.first_message_tokens"] = (
        f"{label}: n = {m.first_input_tokens.size}, mean first input ({first:.0f} tokens) less "
        f"the assumed instructions and tool definitions ({fixed:.0f} tokens)"
    )


def _tools(fit: ScenarioFit, m: Measured, label: str) -> None:
    preset_tools = fit.data["workload"]["tools"]
    if not m.tool_s:
        fit.assumed.append("workload.tools")
        return
    total = sum(v.size for v in m.tool_s.values())
    tools = []
    for index, (name, durations) in enumerate(m.tool_s.items()):
        base = next((t for t in preset_tools if t["name"] == name), preset_tools[0])
        time_fit = fit_distribution(durations)
        out_fit = fit_distribution(np.maximum(m.tool_output_tokens.get(name, np.array([])), 1.0))
        where = f"workload.tools[{index}]"
        fit.sources[f"{where}.weight"] = f"{label}: {durations.size} of {total} calls are {name}"
        if time_fit is not None:
            fit.sources[f"{where}.time_s"] = time_fit.source(f"{label}: {name} durations")
        else:
            fit.assumed.append(f"{where}.time_s ({name}: fewer than 5 calls)")
        if out_fit is not None:
            fit.sources[f"{where}.output_tokens"] = out_fit.source(
                f"{label}: {name} input growth after it less the output before it"
            )
        else:
            fit.assumed.append(f"{where}.output_tokens ({name})")
        tools.append(
            {
                "name": name,
                "weight": durations.size / total,
                "time_s": time_fit.table if time_fit else base["time_s"],
                "output_tokens": out_fit.table if out_fit else base["output_tokens"],
            }
        )
    fit.data["workload"]["tools"] = tools


def _inference(fit: ScenarioFit, m: Measured, label: str) -> None:
    inference = fit.data["inference"]
    decode = decode_fit(m)
    rates = fit_distribution(decode.rates_tps) if decode is not None else None
    if decode is not None and rates is not None:
        inference["decode_tps"] = rates.table
        fit.sources["inference.decode_tps"] = rates.source(
            f"{label}: output tokens / (end - first output - {decode.fixed_s * 1e3:.1f} ms "
            f"fixed, the intercept of a regression, R^2 = {decode.r_squared:.3f})"
        )
    else:
        fit.assumed.append("inference.decode_tps (no first output times in the trace)")
    # Over WebSocket mode the API's per-token work covers new (uncached) input only, so
    # the slopes no longer separate prefill from it: the prefill rate stays assumed.
    prefill = _prefill_tps(m) if fit.transport in ("http", "http-full") else None
    if prefill is not None:
        inference["prefill_tps"], how = prefill
        fit.sources["inference.prefill_tps"] = f"{label}: {how}"
    else:
        fit.assumed.append("inference.prefill_tps")


def _prefill_tps(m: Measured) -> tuple[float, str] | None:
    """1 / (TTFT's slope on uncached tokens less its slope on cached ones), where the
    regression tells them apart: what every input token costs the API cancels out."""
    if m.ttft_s.size < 30:
        return None
    uncached = m.ttft_input_tokens - m.ttft_cached_tokens
    design = np.column_stack([np.ones_like(uncached), uncached, m.ttft_cached_tokens])
    coef, _, rank, _ = np.linalg.lstsq(design, m.ttft_s, rcond=None)
    if rank < 3:
        return None
    residual = m.ttft_s - design @ coef
    dof = max(m.ttft_s.size - 3, 1)
    covariance = np.linalg.pinv(design.T @ design) * float(residual @ residual) / dof
    difference = coef[1] - coef[2]
    error = float(np.sqrt(max(covariance[1, 1] + covariance[2, 2] - 2 * covariance[1, 2], 0)))
    if difference <= 0 or difference < 3 * error:
        return None
    how = (
        f"n = {m.ttft_s.size}, TTFT = {coef[0] * 1e3:.1f} ms + {coef[1] * 1e6:.2f} us x uncached "
        f"+ {coef[2] * 1e6:.2f} us x cached tokens; 1 / (difference of slopes)"
    )
    return float(1.0 / difference), how


def _counted(counts: Counter[int]) -> dict[str, Any] | int:
    if len(counts) == 1:
        return next(iter(counts))
    values = sorted(counts)
    return {
        "kind": "empirical",
        "values": [float(v) for v in values],
        "weights": [float(counts[v]) for v in values],
    }
