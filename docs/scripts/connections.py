"""Connections on codex-spark: HTTP keep-alive expiry and WebSocket drops, analytic engine.

The numbers docs/model/transports.md, docs/model/workload.md and docs/calibration.md
(section 4) quote:
how often the keep-alive expires, what a shorter idle timeout and more drops do
to the reduction, and how long a WebSocket rollout lasts.

    .venv/bin/python -m docs.scripts.connections
"""

from __future__ import annotations

from functools import cache

from scipy import stats

from docs.scripts.markdown import Quote, about, percent, show
from models.loading import load_scenario
from sim.analytic.agent.engine import Expectation, expect
from sim.turn.transports import Transport

PRESET = "codex-spark"
SLOW_TOOL = "run_tests"
TRANSPORTS_PAGE, WORKLOAD_PAGE = "docs/model/transports.md", "docs/model/workload.md"
CALIBRATION = "docs/calibration.md"


@cache
def expected(transport: Transport, *overrides: str) -> Expectation:
    return expect(load_scenario(PRESET, list(overrides)), transport)


def reduction(*overrides: str) -> float:
    return 1 - expected(Transport.WS, *overrides).e2e_s / expected(Transport.HTTP, *overrides).e2e_s


def keepalive() -> dict[str, float]:
    """How often an HTTP turn finds its keep-alive connection closed, and why."""
    s = load_scenario(PRESET)
    tools = {tool.name: tool for tool in s.workload.tools}
    weights = sum(tool.weight for tool in tools.values())
    slow = tools[SLOW_TOOL]
    idle_s = s.client.keepalive_idle_s
    expired = stats.lognorm(s=slow.time_s.sigma, scale=slow.time_s.median).sf(idle_s)
    http = expected(Transport.HTTP)
    extra = http.cold_turns - 1
    return {
        "share": slow.weight / weights,
        "expired": float(expired),
        "per_turn": float(extra / s.workload.tool_calls_per_rollout.mean),
        "extra": float(extra),
        "tool_s": float(
            sum(t.weight * t.time_s.mean for t in tools.values()) / weights,
        ),
    }


def quotes() -> list[Quote]:
    k = keepalive()
    short_idle = "client.keepalive_idle_s=1.0"
    drops = "connection.ws_drops_per_hour=60.0"
    return [
        (
            TRANSPORTS_PAGE,
            "only `run_tests` can exceed 5 s: {} × {} = {} of turns, {} extra handshakes "
            "per rollout",
            (
                f"{k['share']:.4g}",
                f"{k['expired']:.3f}",
                percent(k["per_turn"], 2),
                f"{k['extra']:.2f}",
            ),
        ),
        (
            WORKLOAD_PAGE,
            "Mean tool time per call is {} s; {} of calls are `run_tests`, and "
            "P(`run_tests` > 5 s) = {}.",
            (f"{k['tool_s']:.3f}", percent(k["share"], 2), percent(k["expired"], 1)),
        ),
        (CALIBRATION, "The keep-alive expires on {} of turns", (percent(k["per_turn"], 2),)),
        (
            CALIBRATION,
            "with a 1 s idle timeout HTTP opens {} connections per rollout and the "
            "reduction is {},",
            (
                f"{expected(Transport.HTTP, short_idle).cold_turns:.2f}",
                f"{reduction(short_idle):.3f}",
            ),
        ),
        (
            CALIBRATION,
            "With 10 unplanned drops per hour the reduction is {} whether",
            (f"{reduction('connection.ws_drops_per_hour=10.0'):.3f}",),
        ),
        (
            CALIBRATION,
            "at 60 per hour, {} (true) and {} (false)",
            (f"{reduction(drops):.3f}", f"{reduction(drops, 'connection.store=false'):.3f}"),
        ),
        (
            CALIBRATION,
            "A rollout lasts {} s over WebSocket",
            (about(expected(Transport.WS).e2e_s),),
        ),
    ]


def main() -> None:
    show(quotes())


if __name__ == "__main__":
    main()
