"""The analytic fleet against the fleet DES on ``codex-spark-fleet``, both transports.

Three populations per transport put the bottleneck (the safety classifiers) near 30%,
55% and 80% utilization by the analytic model.  The DES runs each for a 150 s window
after the preset's 60 s warm-up: 2 replications over HTTP (about 500, 950 and 1,350
measured rollouts), 1 over WebSocket (about 1,700, 3,200 and 4,600), so the standard
error of a mean end-to-end time is 1.5% or less, and the 5% tolerance is over three
standard errors.  Measured errors are 1.3% or less (``docs/load.md``).  Then each
transport runs at twice its N* for 60 s: the throughput there, over the bottleneck's
demand per server, gives the DES's N*.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from functools import cache

import numpy as np
import pytest

from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import Pool
from sim.analytic.fleet.demand import fleet_demand
from sim.analytic.fleet.network import closed_curve
from sim.des.replication import Replication
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport

BOTTLENECK_SHARES = (0.3, 0.55, 0.8)
REPLICATIONS = {Transport.HTTP: 2, Transport.WS: 1}


def fleet(agents: int, duration_s: float = 150.0) -> Scenario:
    return load_scenario(
        "codex-spark-fleet", [f"load.agents={agents}", f"load.duration_s={duration_s}"]
    )


def populations(transport: Transport) -> list[int]:
    """Agents at which the analytic bottleneck utilization is near each share."""
    demand = fleet_demand(fleet(1), transport)
    return [int(share * demand.saturation_agents()) for share in BOTTLENECK_SHARES]


def _run(job: tuple[int, float, Transport, int]) -> Replication:
    agents, duration_s, transport, replication = job
    return simulate_fleet(fleet(agents, duration_s), transport, replication)


@cache
def measured() -> dict[tuple[Transport, int], list[Replication]]:
    """Every DES run of this module, in two processes."""
    jobs = [
        (agents, 150.0, t, r)
        for t in (Transport.HTTP, Transport.WS)
        for agents in populations(t)
        for r in range(REPLICATIONS[t])
    ]
    for t in (Transport.HTTP, Transport.WS):
        jobs.append((int(2 * fleet_demand(fleet(1), t).saturation_agents()), 60.0, t, 0))
    with ProcessPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(_run, jobs))
    out: dict[tuple[Transport, int], list[Replication]] = {}
    for (agents, _, t, _), run in zip(jobs, runs, strict=True):
        out.setdefault((t, agents), []).append(run)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_mean_e2e_and_ttft_are_within_5_percent_of_the_des(transport: Transport) -> None:
    """At each population: mean e2e and mean TTFT within 5%, each pool's utilization
    within 0.03, and the same bottleneck (the most utilized pool)."""
    demand = fleet_demand(fleet(1), transport)
    counts = populations(transport)
    curve = closed_curve(demand, max(counts))
    for agents in counts:
        runs = measured()[(transport, agents)]
        records = [r.records for r in runs]
        e2e = np.mean([r.e2e_s.mean() for r in records])
        ttft = np.mean([r.ttft_sum_s.sum() / r.turns.sum() for r in records])
        point = curve[agents - 1]
        assert point.e2e_s == pytest.approx(e2e, rel=0.05), agents
        assert point.ttft_s == pytest.approx(ttft, rel=0.05), agents
        utilization = {p: np.mean([r.pools[p].utilization for r in runs]) for p in Pool}
        for pool in Pool:
            assert point.utilization[pool] == pytest.approx(utilization[pool], abs=0.03)
        assert max(utilization, key=utilization.get) is Pool.SAFETY
        assert max(point.utilization, key=point.utilization.get) is Pool.SAFETY


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_the_saturation_population_agrees_with_the_des(transport: Transport) -> None:
    """N* = (think + uncontended e2e) x the throughput at saturation.  At twice N* the DES
    serves as many rollouts per second as the bottleneck allows (within 3%), and its N*,
    from that throughput and its own lightest-load e2e, is the model's within 5%."""
    demand = fleet_demand(fleet(1), transport)
    pool, per_server_s = demand.bottleneck()
    assert pool is Pool.SAFETY
    saturated = measured()[(transport, int(2 * demand.saturation_agents()))][0]
    throughput = saturated.rollouts_started / saturated.window_s
    assert throughput == pytest.approx(1 / per_server_s, rel=0.03)
    light = measured()[(transport, populations(transport)[0])]
    e2e = np.mean([r.records.e2e_s.mean() for r in light])
    assert throughput * (demand.think_s + e2e) == pytest.approx(
        demand.saturation_agents(), rel=0.05
    )
