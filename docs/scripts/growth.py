"""Render and safety work over a rollout of n tool calls: HTTP quadratic, WebSocket linear.

Evaluates the closed forms of docs/model.md ("Quadratic versus linear") on the
codex-spark preset and checks them against the analytic engine with a
constant number of tool calls.  Unplanned WebSocket drops are set to zero so
that every WebSocket turn after the first is warm, as the closed form assumes.
Then the end-to-end reduction as a function of n.

    .venv/bin/python docs/scripts/growth.py
"""

from __future__ import annotations

import numpy as np

from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.engine.analytic import expect
from sim.engine.transports import Transport

PRESET = "codex-spark"
CALLS = (0, 5, 10, 20, 30, 40, 60, 80, 120)


def coefficients(s: Scenario) -> dict[str, float]:
    """The symbols of the closed form, from the scenario."""
    w = s.workload
    weights = np.array([tool.weight for tool in w.tools])
    tool_output = float(weights @ [tool.output_tokens.mean for tool in w.tools] / weights.sum())
    return {
        "phi": w.instructions_tokens + w.tool_definitions_tokens,
        "first": w.first_message_tokens,
        "u": tool_output,
        "g": w.output_tokens.mean + tool_output,
        "h": s.api.render_cache_hit_prob,
        "rho": s.api.render_per_1k_tokens_ms,
        "beta": s.safety.blocking_per_1k_tokens_ms,
        "pi": s.safety.parallel_per_1k_tokens_ms,
        "fixed": s.safety.blocking_fixed_ms + s.safety.parallel_fixed_ms,
    }


def http_work_s(c: dict[str, float], n: int) -> float:
    """Expected HTTP render + safety work (s) over a rollout of n tool calls."""
    full = (n + 1) * (c["phi"] + c["first"]) + c["g"] * n * (n + 1) / 2
    rendered = c["h"] * (c["first"] + n * c["u"]) + (1 - c["h"]) * full
    ms = c["rho"] * rendered / 1000 + (n + 1) * c["fixed"] + (c["beta"] + c["pi"]) * full / 1000
    return ms / 1000


def ws_work_s(c: dict[str, float], n: int) -> float:
    """Expected WebSocket render + safety work (s): the full prompt once, then new input only."""
    tokens = c["phi"] + c["first"] + n * c["u"]
    ms = (c["rho"] + c["beta"] + c["pi"]) * tokens / 1000 + (n + 1) * c["fixed"]
    return ms / 1000


def engine_work_s(s: Scenario, transport: Transport) -> float:
    e = expect(s, transport)
    return float(e.stage_s[STAGES.index(Stage.RENDER)] + e.safety_cpu_s)


def main() -> None:
    base = load_scenario(PRESET)
    c = coefficients(base)
    quadratic = c["g"] / 2 * ((1 - c["h"]) * c["rho"] + c["beta"] + c["pi"]) / 1e6
    print(
        f"phi = {c['phi']:,.0f} tokens, F = {c['first']:,.0f} tokens, "
        f"E[tool output] = {c['u']:,.1f} tokens, g = {c['g']:,.1f} tokens/turn"
    )
    print(f"HTTP coefficient of n^2: {quadratic * 1000:.3f} ms")
    print(f"WebSocket slope: {ws_work_s(c, 1) - ws_work_s(c, 0):.4f} s per tool call\n")
    print(
        "| tool calls n | http, closed form (s) | http, analytic engine (s) "
        "| ws, closed form (s) | ws, analytic engine (s) | http / ws |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for n in CALLS:
        s = load_scenario(
            PRESET, [f"workload.tool_calls_per_rollout={n}", "connection.ws_drops_per_hour=0"]
        )
        http, ws = http_work_s(c, n), ws_work_s(c, n)
        print(
            f"| {n} | {http:.3f} | {engine_work_s(s, Transport.HTTP):.3f} "
            f"| {ws:.3f} | {engine_work_s(s, Transport.WS):.3f} | {http / ws:.1f} |"
        )
    print("\nEnd to end (analytic engine, preset drop rate):\n")
    print("| tool calls n | http e2e (s) | ws e2e (s) | saved (s) | e2e reduction |")
    print("| --- | --- | --- | --- | --- |")
    for n in CALLS:
        s = load_scenario(PRESET, [f"workload.tool_calls_per_rollout={n}"])
        http, ws = expect(s, Transport.HTTP).e2e_s, expect(s, Transport.WS).e2e_s
        print(f"| {n} | {http:.2f} | {ws:.2f} | {http - ws:.2f} | {1 - ws / http:.3f} |")


if __name__ == "__main__":
    main()
