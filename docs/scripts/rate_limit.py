"""The fleet's rate limit: what the organizations admit, the 429s and the time refused, DES
against the analytic fleet, as docs/load.md quotes them.

codex-spark-fleet at 40 and 80 agents with a constant think time of 5 s; three
replications of 300 s after a 120 s warm-up per DES point.

    .venv/bin/python -m docs.scripts.rate_limit
"""

from __future__ import annotations

import math
from functools import cache

from docs.scripts.markdown import Quote, show, table
from models.loading import load_scenario
from sim.analysis.fleet_analytic import analytic_points
from sim.analysis.fleet_summary import fleet_result, run_fleet
from sim.analysis.results import RunResult
from sim.turn.transports import Transport

PRESET = "codex-spark-fleet"
RUN = (
    "load.warmup_s=120",
    "load.duration_s=300",
    "load.think_time_s={kind='constant', value=5.0}",
)
WHOLE = "rate_limit.retry_after_resolution_s=1"
POINTS = (
    (Transport.WS, 40, ()),
    (Transport.WS, 40, ("rate_limit.requests_per_minute=100000",)),
    (Transport.WS, 40, ("rate_limit.requests_per_minute=900",)),
    (Transport.WS, 40, ("rate_limit.requests_per_minute=900", WHOLE)),
    (Transport.WS, 80, ("rate_limit.requests_per_minute=900",)),
    (Transport.WS, 40, ("rate_limit.requests_per_minute=450", "rate_limit.organizations=2")),
    (Transport.WS, 40, ("rate_limit.tokens_per_minute=2e7",)),
    (Transport.HTTP, 40, ()),
    (Transport.HTTP, 40, ("rate_limit.requests_per_minute=900",)),
)
"""(transport, agents, rate-limit overrides)."""


@cache
def results(transport: Transport, agents: int, limit: tuple[str, ...]) -> tuple[RunResult, ...]:
    """The DES result and the analytic one at one point."""
    s = load_scenario(PRESET, [*RUN, f"load.agents={agents}", *limit])
    des = fleet_result(PRESET, s, transport, run_fleet(s, transport))
    return des, analytic_points(PRESET, [s], transport)[0]


def _limit(limit: tuple[str, ...]) -> str:
    if not limit:
        return "none"
    return ", ".join(item.removeprefix("rate_limit.") for item in limit)


def comparison() -> str:
    body = []
    for transport, agents, limit in POINTS:
        des, analytic = results(transport, agents, limit)
        d, a = des.fleet.rate_limit, analytic.fleet.rate_limit
        low, high = des.e2e_s.ci95
        cells = ["-"] * 6
        if d is not None:
            cells = [
                f"{d.admitted_requests_per_min.mean:,.0f}",
                f"{a.admitted_requests_per_min.mean:,.0f}",
                f"{d.refused_per_request:.2f}",
                f"{a.refused_per_request:.2f}",
                f"{d.refused_s_per_turn:.3f}",
                f"{a.refused_s_per_turn:.3f}",
            ]
        body.append(
            [
                transport.value,
                f"{agents}",
                _limit(limit),
                *cells,
                f"{des.e2e_s.mean:.1f} [{low:.1f}, {high:.1f}]",
                f"{analytic.e2e_s.mean:.1f}",
            ]
        )
    header = [
        "transport",
        "agents",
        "limit",
        "admitted requests/min per org, DES",
        "analytic",
        "429s per request, DES",
        "analytic",
        "refused s per turn, DES",
        "analytic",
        "e2e s, DES (95% CI)",
        "analytic",
    ]
    return table(header, body)


def _refusal_error(kind: str) -> float:
    """The largest relative error of the analytic 429s per request over the rows of one
    kind of limit, in percent, rounded up to a tenth."""
    errors = []
    for transport, agents, limit in POINTS:
        if not any(item.startswith(f"rate_limit.{kind}") for item in limit):
            continue
        des, analytic = results(transport, agents, limit)
        d, a = des.fleet.rate_limit.refused_per_request, analytic.fleet.rate_limit
        if d > 0:
            errors.append(abs(a.refused_per_request / d - 1.0))
    return math.ceil(max(errors) * 1000) / 10


def quotes() -> list[Quote]:
    limit = ("rate_limit.requests_per_minute=900",)
    free = {t: results(t, 40, ())[0].e2e_s.mean for t in (Transport.HTTP, Transport.WS)}
    limited = {t: results(t, 40, limit)[0].e2e_s.mean for t in (Transport.HTTP, Transport.WS)}
    return [
        (
            "docs/load.md",
            "that is coarser: within {}% of the DES for request limits and {}% for the",
            (f"{_refusal_error('requests')}", f"{_refusal_error('tokens')}"),
        ),
        (
            "docs/load.md",
            "Unlimited, WebSocket mode takes {} s per rollout against HTTP's {} s; under a "
            "limit of 900 requests a minute both take about {} s ({} and {})",
            (
                f"{free[Transport.WS]:.1f}",
                f"{free[Transport.HTTP]:.1f}",
                f"{(limited[Transport.WS] + limited[Transport.HTTP]) / 2:.0f}",
                f"{limited[Transport.WS]:.1f}",
                f"{limited[Transport.HTTP]:.1f}",
            ),
        ),
    ]


BLOCKS = {"rate-limit": comparison}

if __name__ == "__main__":
    for name, block in BLOCKS.items():
        print(f"{name}:\n{block()}\n")
    show(quotes())
