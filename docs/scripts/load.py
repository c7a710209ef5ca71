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
from models.stages import STAGE_COLUMN, Stage
from sim.analysis.capacity import CapacityResult, Slo, SloMetric, saturation_estimate, search
from sim.analysis.capacity import with_agents as closed
from sim.analysis.fleet_summary import fleet_result, run_fleet
from sim.analysis.metrics import Metric, Statistic
from sim.analysis.results import RunResult
from sim.engine.analytic import expect
from sim.engine.transports import Transport

PAGE = "docs/load.md"
PRESET, WINDOW = "codex-spark", "load.duration_s=120"
SLOS = [Slo(SloMetric.TTFT_P95_S, 1.0), Slo(SloMetric.E2E_P95_S, 40.0)]
LIGHT_AGENTS, HEAVY_HTTP_AGENTS = 50, 400
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
    return saturation_estimate(scenario(), transport)


def agents(transport: Transport) -> list[int]:
    """The load points of the table: light, saturation, capacities (and far past, for http)."""
    http_capacity = capacity(Transport.HTTP).capacity_agents
    if transport is Transport.HTTP:
        return [LIGHT_AGENTS, saturation(transport), http_capacity, HEAVY_HTTP_AGENTS]
    return [LIGHT_AGENTS, http_capacity, saturation(transport), capacity(transport).capacity_agents]


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
    """What follows from the analytic engine and the parameters: quick."""
    s = scenario()
    demand = {t: expect(s, t) for t in TRANSPORTS}
    k = s.capacity.decode_slowdown_per_stream
    streams = s.capacity.streams_per_replica
    # A turn holds a classifier worker for its safety stage (the stage table's hold).
    safety = STAGE_COLUMN[Stage.SAFETY]
    per_turn = {t: demand[t].stage_s[safety] / demand[t].turns for t in TRANSPORTS}
    return [
        (
            PAGE,
            "(a {}-stream batch decodes each stream at {} of the lone rate)",
            (f"{streams}", percent(1 / (1 + k * (streams - 1)))),
        ),
        (
            PAGE,
            "it saturates at about {} agents over HTTP but about {} over WebSocket",
            tuple(about(saturation(t)) for t in TRANSPORTS),
        ),
        (
            PAGE,
            "(about {} s of classifier time per turn at the mean context of codex-spark), over "
            "WebSocket only the new tool output (about {} s)",
            (about(per_turn[Transport.HTTP]), about(per_turn[Transport.WS])),
        ),
        (
            PAGE,
            "({} s of API work per rollout against {} s)",
            tuple(f"{demand[t].api_cpu_s:.{d}f}" for t, d in zip(TRANSPORTS, (1, 2), strict=True)),
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
    saturated = [point(Transport.HTTP, HEAVY_HTTP_AGENTS), point(Transport.WS, ws)]
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
