"""Render and safety work over a rollout of n tool calls: HTTP quadratic, WebSocket linear.

Evaluates the closed forms of docs/model/analytic.md ("Quadratic versus linear") on the
codex-spark preset and checks them against the analytic engine with a
constant number of tool calls.  Unplanned WebSocket drops are set to zero so
that every WebSocket turn after the first is warm, as the closed form assumes.
Then the end-to-end reduction as a function of n.

    .venv/bin/python -m docs.scripts.growth
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, about, percent, table
from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analytic.agent.engine import expect
from sim.turn.transports import Transport

PRESET = "codex-spark"
CALLS = (0, 5, 10, 20, 30, 40, 60, 80, 120)
ANALYTIC_PAGE, WORKLOAD_PAGE = "docs/model/analytic.md", "docs/model/workload.md"
CALIBRATION = "docs/calibration.md"


def coefficients(s: Scenario) -> dict[str, float]:
    """The symbols of the closed form, from the scenario."""
    w = s.workload
    tool_output = w.mean_tool_output_tokens()
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


def closed_form() -> str:
    """Render + safety work per rollout: the closed forms against the analytic engine."""
    c = coefficients(load_scenario(PRESET))
    body = []
    for n in CALLS:
        s = load_scenario(
            PRESET, [f"workload.tool_calls_per_rollout={n}", "connection.ws_drops_per_hour=0"]
        )
        http, ws = http_work_s(c, n), ws_work_s(c, n)
        body.append(
            [
                f"{n}",
                f"{http:.3f}",
                f"{engine_work_s(s, Transport.HTTP):.3f}",
                f"{ws:.3f}",
                f"{engine_work_s(s, Transport.WS):.3f}",
                f"{http / ws:.1f}",
            ]
        )
    header = [
        "tool calls n",
        "http, closed form (s)",
        "http, analytic engine (s)",
        "ws, closed form (s)",
        "ws, analytic engine (s)",
        "http / ws",
    ]
    return table(header, body)


@cache
def e2e_reduction(n: int) -> tuple[float, float, float]:
    """(http e2e, ws e2e, reduction) with a constant number of tool calls, preset drops."""
    s = load_scenario(PRESET, [f"workload.tool_calls_per_rollout={n}"])
    http, ws = expect(s, Transport.HTTP).e2e_s, expect(s, Transport.WS).e2e_s
    return http, ws, 1 - ws / http


def end_to_end() -> str:
    body = []
    for n in CALLS:
        http, ws, reduction = e2e_reduction(n)
        body.append([f"{n}", f"{http:.2f}", f"{ws:.2f}", f"{http - ws:.2f}", f"{reduction:.3f}"])
    header = ["tool calls n", "http e2e (s)", "ws e2e (s)", "saved (s)", "e2e reduction"]
    return table(header, body)


BLOCKS = {"closed-form": closed_form, "e2e": end_to_end}


def quadratic_ms(s: Scenario) -> dict[str, float]:
    """Coefficients of n^2 on the critical path (ms), as docs/model/analytic.md tabulates them."""
    c, a, n, i = coefficients(s), s.api, s.network, s.inference
    items = s.workload.output_items_per_turn + 1
    return {
        "render (on a miss)": (1 - c["h"]) * c["rho"] * c["g"] / 2 / 1000,
        "blocking safety": c["beta"] * c["g"] / 2 / 1000,
        "validation": a.validate_per_item_ms * items / 2,
        "state load": a.state_store_per_kb_ms * a.state_bytes_per_token / 1024 * c["g"] / 2,
        "client build (`http-full` only)": s.client.build_per_item_ms * items / 2,
        "upload (`http-full` only)": n.bytes_per_token * c["g"] / 2 / n.uplink_bytes_per_s * 1e3,
        "prefill (every transport)": (1 - i.prefix_cache_hit_fraction)
        * c["g"]
        / 2
        / i.prefill_tps
        * 1e3,
    }


def quotes() -> list[Quote]:
    s = load_scenario(PRESET)
    c = coefficients(s)
    history_rate = (1 - c["h"]) * c["rho"] + c["beta"] + c["pi"]
    per_n2 = quadratic_ms(s)
    api_and_safety = sum(per_n2[k] for k in list(per_n2)[:4])
    mean_calls = s.workload.tool_calls_per_rollout.mean
    table_quotes = [
        (ANALYTIC_PAGE, f"| {cost} |{{...}}| {{}} ms |", (f"{value:.2f}",))
        for cost, value in per_n2.items()
    ]
    return [
        *table_quotes,
        (
            WORKLOAD_PAGE,
            "= {} tokens, E[*u*] = {} tokens, so g = {} tokens per turn",
            (f"{s.workload.output_tokens.mean:.1f}", f"{c['u']:.1f}", f"{c['g']:.1f}"),
        ),
        (
            WORKLOAD_PAGE,
            "the last prompt of a 30-call rollout holds about {} tokens",
            (about(c["phi"] + c["first"] + 30 * c["g"], 3),),
        ),
        (
            ANALYTIC_PAGE,
            "that is {} × {} / 1000 = {} ms × *n*²",
            (f"{c['g'] / 2:.1f}", f"{history_rate:g}", f"{c['g'] / 2 * history_rate / 1000:.2f}"),
        ),
        (
            ANALYTIC_PAGE,
            "**linear in *n***, {} ms per tool call",
            (f"{(ws_work_s(c, 1) - ws_work_s(c, 0)) * 1000:.1f}",),
        ),
        (
            ANALYTIC_PAGE,
            "add about {} ms × *n*² to the critical path, {} s at *n* = {} (the preset's mean)",
            (
                f"{api_and_safety:.2f}",
                f"{api_and_safety * mean_calls**2 / 1000:.1f}",
                f"{mean_calls:g}",
            ),
        ),
        (
            ANALYTIC_PAGE,
            "Prefill's quadratic term ({} ms × *n*² here)",
            (f"{per_n2['prefill (every transport)']:.2f}",),
        ),
        (
            CALIBRATION,
            "At 20 to 40 calls, the range FACTS names, the model gives {} to {}",
            (percent(e2e_reduction(20)[2]), percent(e2e_reduction(40)[2])),
        ),
        (CALIBRATION, "A one-request rollout is {} slower", (percent(-e2e_reduction(0)[2]),)),
        (
            CALIBRATION,
            "a rollout with no tool call is {} *slower*",
            (percent(-e2e_reduction(0)[2]),),
        ),
    ]


def main() -> None:
    c = coefficients(load_scenario(PRESET))
    print(
        f"phi = {c['phi']:,.0f} tokens, F = {c['first']:,.0f} tokens, "
        f"E[tool output] = {c['u']:,.1f} tokens, g = {c['g']:,.1f} tokens/turn"
    )
    print(f"WebSocket slope: {ws_work_s(c, 1) - ws_work_s(c, 0):.4f} s per tool call\n")
    print(closed_form())
    print("\nEnd to end (analytic engine, preset drop rate):\n")
    print(end_to_end())


if __name__ == "__main__":
    main()
