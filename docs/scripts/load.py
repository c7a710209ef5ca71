"""The fleet under load on codex-spark: the headline of docs/load.md.

The load table (closed load, 120 s measured window, 3 replications, preset seed)
at 50 agents, at the analytic saturation estimate and at the capacity of each
transport, the capacity at TTFT p95 <= 1 s and e2e p95 <= 40 s, and the numbers
the prose reads from them.  The table and the capacity search simulate fleets of
up to about 2,000 agents: they are ``SLOW`` (several minutes), so the test suite
checks only the 50-agent rows (``row``) and the analytic numbers.

    .venv/bin/python -m docs.scripts.load
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, percent, show, table
from models.loading import load_scenario
from models.stages import Stage
from sim.analysis.fleet_summary import fleet_result, run_fleet
from sim.analysis.metrics import Metric, Statistic
from sim.analysis.results import RunResult
from sim.analytic.fleet.demand import fleet_demand
from sim.capacity.objectives import CapacityResult, Slo, SloMetric
from sim.capacity.objectives import with_agents as closed
from sim.capacity.search import search
from sim.turn.transports import Transport

PAGE = "docs/load.md"
PRESET, WINDOW = "codex-spark", "load.duration_s=120"
SLOS = [Slo(SloMetric.TTFT_P95_S, 1.0), Slo(SloMetric.E2E_P95_S, 40.0)]
LIGHT_AGENTS = {Transport.HTTP: 50, Transport.WS: 250}
"""The first load point of each transport: cheap enough for the test suite."""
BELOW_CAPACITY = {Transport.HTTP: 150, Transport.WS: 800}
PAST_CAPACITY = {Transport.HTTP: 250, Transport.WS: 2000}
TRANSPORTS = (Transport.HTTP, Transport.WS)
SLOW = {"headline"}
BATCH = 2
"""Replications per batch of a capacity probe: as ``loopbudget capacity`` runs them on the
2-core machine these pages were measured on (a probe stops after the batch that decides it,
so the answer depends on the batch, within the search's resolution)."""


def scenario():
    return load_scenario(PRESET, [WINDOW])


@cache
def point(transport: Transport, agents: int) -> RunResult:
    s = closed(scenario(), agents)
    return fleet_result(f"{PRESET}:{transport.value}", s, transport, run_fleet(s, transport))


@cache
def capacity(transport: Transport) -> CapacityResult:
    return search(scenario(), transport, SLOS, batch=BATCH)


def saturation(transport: Transport) -> int:
    """The analytic N*: where the throughput bounds of the busiest pool cross."""
    return int(fleet_demand(scenario(), transport).saturation_agents())


def agents(transport: Transport) -> list[int]:
    """The load points of the table: light, below capacity, the capacity and the first
    load that misses, and far past it."""
    found = capacity(transport)
    return [
        LIGHT_AGENTS[transport],
        BELOW_CAPACITY[transport],
        found.capacity_agents,
        found.first_failing_agents,
        PAST_CAPACITY[transport],
    ]


def row(transport: Transport, agents: int) -> list[str]:
    """One row of the table: latency, throughput, utilization and queueing at one load."""
    r = point(transport, agents)
    e2e, ttft, busy = r.e2e_s, r.ttft_s, r.fleet.utilization
    return [
        transport.value,
        f"{agents}",
        f"{e2e.mean:.1f} / {e2e.statistic(Statistic.P95):.1f}",
        f"{ttft.mean * 1000:.0f} / {ttft.statistic(Statistic.P95) * 1000:.0f}",
        f"{r.fleet.throughput[Metric.TURNS_PER_S].mean:.0f}",
        *(f"{busy[pool].mean:.0%}" for pool in ("api", "safety", "inference")),
        f"{r.budget_s[Stage.QUEUE]:.2f}",
    ]


def headline() -> str:
    header = [
        "transport",
        "agents",
        "e2e s mean / p95",
        "TTFT ms mean / p95",
        "turns/s",
        "util api",
        "util safety",
        "util inference",
        "queue s / rollout",
    ]
    body = [row(t, n) for t in TRANSPORTS for n in agents(t)]
    lines = table(header, body).splitlines()
    lines[1] = "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    return "\n".join(lines)


BLOCKS = {"headline": headline}


def quotes() -> list[Quote]:
    """What follows from the parameters: quick."""
    s = scenario()
    k = s.capacity.decode_slowdown_per_stream
    streams = s.capacity.streams_per_replica
    return [
        (
            PAGE,
            "(a {}-stream batch decodes each stream at {} of the lone rate)",
            (f"{streams}", percent(1 / (1 + k * (streams - 1)))),
        ),
    ]


def slow_quotes() -> list[Quote]:
    """What the fleet simulations give: minutes."""
    found = {t: capacity(t) for t in TRANSPORTS}
    http, ws = (found[t] for t in TRANSPORTS)
    bounds = [f"{n:,}" for t in TRANSPORTS for n in found[t].ci95_agents]
    at = {t: found[t].at_capacity.checks for t in TRANSPORTS}
    e2e = {t: at[t][SloMetric.E2E_P95_S.value] for t in TRANSPORTS}
    ttft = {t: at[t][SloMetric.TTFT_P95_S.value] for t in TRANSPORTS}
    estimates = [found[t].analytic_estimate_agents for t in TRANSPORTS]
    past_http = point(Transport.HTTP, http.capacity_agents)
    return [
        (
            PAGE,
            "loopbudget load codex-spark:http --agents {},{},{},{},{} --set",
            tuple(f"{n}" for n in agents(Transport.HTTP)),
        ),
        (
            PAGE,
            "loopbudget load codex-spark:ws --agents {},{},{},{},{} --set",
            tuple(f"{n}" for n in agents(Transport.WS)),
        ),
        (
            PAGE,
            "http **{} agents** ({} miss; with 95% confidence between {} and {}), ws **{} "
            "agents** ({} miss; with 95% confidence between {} and {}): **{} times**",
            (
                f"{http.capacity_agents:,}",
                f"{http.first_failing_agents:,}",
                *bounds[:2],
                f"{ws.capacity_agents:,}",
                f"{ws.first_failing_agents:,}",
                *bounds[2:],
                f"{ws.capacity_agents / http.capacity_agents:.1f}",
            ),
        ),
        (
            PAGE,
            "At the answer, http's e2e p95 is {} s (95% CI {}-{}) and its TTFT p95 {} s; "
            "ws's are {} s ({}-{}) and {} s.",
            tuple(
                text
                for t in TRANSPORTS
                for text in (
                    f"{e2e[t].value_s:.1f}",
                    f"{e2e[t].ci95[0]:.1f}",
                    f"{e2e[t].ci95[1]:.1f}",
                    f"{ttft[t].value_s:.2f}",
                )
            ),
        ),
        (
            PAGE,
            "The analytic estimates were {} and {} agents ({} times).",
            (f"{estimates[0]:,}", f"{estimates[1]:,}", f"{estimates[1] / estimates[0]:.1f}"),
        ),
        (
            PAGE,
            "(measured {}). Over HTTP",
            (f"{ws.capacity_agents / http.capacity_agents:.1f}",),
        ),
        (
            PAGE,
            "Inference is far from the bottleneck over HTTP ({})",
            (percent(past_http.fleet.utilization["inference"].mean),),
        ),
    ]


def main() -> None:
    show(quotes())
    print(headline())
    show(slow_quotes())


if __name__ == "__main__":
    main()
