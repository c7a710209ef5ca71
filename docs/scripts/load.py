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

from docs.scripts.markdown import Quote, about, percent, show, table
from models.loading import load_scenario
from models.stages import Stage
from sim.analysis.capacity import CapacityResult, Slo, SloMetric
from sim.analysis.capacity import with_agents as closed
from sim.analysis.capacity_search import search
from sim.analysis.fleet_demand import fleet_demand
from sim.analysis.fleet_summary import fleet_result, run_fleet
from sim.analysis.metrics import Metric, Statistic
from sim.analysis.results import RunResult
from sim.engine.transports import Transport

PAGE = "docs/load.md"
PRESET, WINDOW = "codex-spark", "load.duration_s=120"
SLOS = [Slo(SloMetric.TTFT_P95_S, 1.0), Slo(SloMetric.E2E_P95_S, 40.0)]
LIGHT_AGENTS = {Transport.HTTP: 50, Transport.WS: 250}
"""The first load point of each transport: cheap enough for the test suite."""
BELOW_CAPACITY = {Transport.HTTP: 150, Transport.WS: 800}
PAST_CAPACITY = {Transport.HTTP: 250, Transport.WS: 2000}
TRANSPORTS = (Transport.HTTP, Transport.WS)
SLOW = {"headline"}


def scenario():
    return load_scenario(PRESET, [WINDOW])


@cache
def point(transport: Transport, agents: int) -> RunResult:
    s = closed(scenario(), agents)
    return fleet_result(f"{PRESET}:{transport.value}", s, transport, run_fleet(s, transport))


@cache
def capacity(transport: Transport) -> CapacityResult:
    return search(scenario(), transport, SLOS)


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
    http, ws = (found[t].capacity_agents for t in TRANSPORTS)
    checks = []
    for t in TRANSPORTS:
        at = found[t].at_capacity.checks
        for slo in SLOS:
            c = at[slo.metric.value]
            digits = 2 if slo.metric is SloMetric.TTFT_P95_S else 1
            checks += [
                f"{c.value_s:.{digits}f}",
                f"{c.ci95[0]:.{digits}f}",
                f"{c.ci95[1]:.{digits}f}",
            ]
    saturated = [point(Transport.HTTP, PAST_CAPACITY[Transport.HTTP]), point(Transport.WS, ws)]
    turns_s = [r.fleet.throughput[Metric.TURNS_PER_S].mean for r in saturated]
    inference = [r.fleet.utilization["inference"].mean for r in saturated]
    return [
        (
            PAGE,
            "loopbudget load codex-spark:http --agents {},{},{},{} --set",
            tuple(f"{n}" for n in agents(Transport.HTTP)),
        ),
        (
            PAGE,
            "loopbudget load codex-spark:ws --agents {},{},{},{} --set",
            tuple(f"{n}" for n in agents(Transport.WS)),
        ),
        (
            PAGE,
            "http **{} agents** ({} miss), ws **{} agents** ({} miss): **{} times**",
            (
                f"{http:,}",
                f"{found[Transport.HTTP].first_failing_agents:,}",
                f"{ws:,}",
                f"{found[Transport.WS].first_failing_agents:,}",
                f"{ws / http:.1f}",
            ),
        ),
        (
            PAGE,
            "http's TTFT p95 is {} s (95% CI {}-{}) and its e2e p95 {} s ({}-{}); ws's are {} s "
            "({}-{}) and {} s ({}-{}).",
            tuple(checks),
        ),
        (
            PAGE,
            "the cell serves about {} turns/s over HTTP and about {} over WebSocket.",
            tuple(about(v) for v in turns_s),
        ),
        (PAGE, "Inference is far from the bottleneck over HTTP ({})", (percent(inference[0]),)),
        (PAGE, "inference reaches {} near capacity", (percent(inference[1]),)),
    ]


def main() -> None:
    show(quotes())
    print(headline())
    show(slow_quotes())


if __name__ == "__main__":
    main()
