"""The analytic fleet's solvers against closed forms, exactly: the machine repairman
(M/M/c//N) for the closed MVA, a three-station product-form network solved by brute-force
convolution for its sub-network recursion, and Erlang C at every pool of an open (Jackson)
network for the open model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.loading import load_scenario
from models.stages import POOLS, Pool
from sim.analytic.fleet.demand import FleetDemand, PoolDemand, fleet_demand
from sim.analytic.fleet.network import closed_curve, open_point
from sim.analytic.fleet.queueing import closed_mva, erlang_c, mmc_wait_s
from sim.turn.transports import Transport


def repairman(machines: int, repairmen: int, repair_s: float, up_s: float) -> tuple[float, float]:
    """M/M/c//N in closed form: (throughput, mean time at the repair shop).

    p(j) is proportional to N! / (N - j)! (S / Z)^j / (j! if j <= c else c! c^(j - c)),
    computed in logs; throughput = sum p(j) min(j, c) / S; time = L / throughput.
    """
    n, c = machines, repairmen
    j = np.arange(n + 1)
    log_p = np.array(
        [
            math.lgamma(n + 1)
            - math.lgamma(n - k + 1)
            + k * math.log(repair_s / up_s)
            - (math.lgamma(k + 1) if k <= c else math.lgamma(c + 1) + (k - c) * math.log(c))
            for k in j
        ]
    )
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    throughput = float((p * np.minimum(j, c)).sum() / repair_s)
    return throughput, float((p * j).sum() / throughput)


def one_station(servers: int, demand_s: float, delay_s: float, machines: int) -> list:
    return closed_mva(
        np.array([servers]),
        machines,
        lambda rows: np.array([[demand_s]]),
        lambda d, w, q: delay_s + d.sum(axis=1) + w.sum(axis=1),
    )


@pytest.mark.parametrize(
    ("servers", "up_s"), [(1, 4.0), (2, 3.0), (4, 10.0), (8, 2.0), (32, 40.0), (64, 5.0)]
)
def test_mva_is_the_machine_repairman_at_every_population(servers: int, up_s: float) -> None:
    """N = 1 .. 4c (below, at and far past saturation): throughput and time at the
    shop equal the closed form to 1e-12.  (The textbook MVA step for p(0), 1 minus the
    other marginals, gives a throughput 56% low at 200 machines on 32 repairmen.)"""
    repair_s = 1.0
    steps = one_station(servers, repair_s, up_s, 4 * servers)
    for step in steps:
        throughput, at_shop_s = repairman(step.population, servers, repair_s, up_s)
        assert step.throughput_per_s == pytest.approx(throughput, rel=1e-12)
        assert repair_s + step.wait_s[0] == pytest.approx(at_shop_s, rel=1e-12)


@pytest.mark.parametrize(("machines", "servers"), [(5, 1), (60, 8), (2000, 512), (3000, 64)])
def test_mva_is_the_machine_repairman_at_large_sizes(machines: int, servers: int) -> None:
    throughput, at_shop_s = repairman(machines, servers, 0.5, 3.0)
    step = one_station(servers, 0.5, 3.0, machines)[-1]
    assert step.throughput_per_s == pytest.approx(throughput, rel=1e-12)
    assert 0.5 + step.wait_s[0] == pytest.approx(at_shop_s, rel=1e-12)


def convolution(delay_s: float, demands_s: list[float], servers: list[int], n: int):
    """Brute-force product-form solution: G = delay * f_1 * ... * f_K, in logs."""

    def log_conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(a.size)
        for m in range(a.size):
            terms = a[: m + 1] + b[m::-1]
            out[m] = terms.max() + math.log(np.exp(terms - terms.max()).sum())
        return out

    counts = np.arange(n + 1)
    delay = counts * math.log(delay_s) - np.array([math.lgamma(k + 1) for k in counts])
    stations = [
        np.concatenate([[0.0], np.cumsum(np.log(d / np.minimum(counts[1:], c)))])
        for d, c in zip(demands_s, servers, strict=True)
    ]
    total = delay
    for f in stations:
        total = log_conv(total, f)
    jobs = []
    for k, f in enumerate(stations):
        rest = delay
        for i, g in enumerate(stations):
            if i != k:
                rest = log_conv(rest, g)
        jobs.append(float((counts * np.exp(f + rest[n - counts] - total[n])).sum()))
    return math.exp(total[n - 1] - total[n]), np.array(jobs)


@pytest.mark.parametrize("population", [10, 80, 150, 300])
def test_mva_of_three_multiserver_stations_is_the_convolution_solution(population: int) -> None:
    """Servers 2, 8, 16 with demands 0.5, 1.2, 0.3 s and a 3 s delay: throughput and the
    mean jobs at each station agree with the normalizing-constant solution to 1e-10,
    from light load to twice saturation (X* = 4/s at station 1)."""
    demands, servers = [0.5, 1.2, 0.3], [2, 8, 16]
    step = closed_mva(
        np.array(servers),
        population,
        lambda rows: np.array([demands]),
        lambda d, w, q: 3.0 + d.sum(axis=1) + w.sum(axis=1),
    )[-1]
    throughput, jobs = convolution(3.0, demands, servers, population)
    assert step.throughput_per_s == pytest.approx(throughput, rel=1e-10)
    np.testing.assert_allclose(step.jobs, jobs, rtol=1e-10)


def test_erlang_c_reduces_to_the_closed_forms() -> None:
    """M/M/1 waits with probability rho; M/M/2 has C = 2 rho^2 / (1 + rho); a million
    servers under a tiny load never wait; at saturation everyone waits."""
    for rho in (0.1, 0.5, 0.95):
        assert erlang_c(1, rho) == pytest.approx(rho, rel=1e-12)
        assert erlang_c(2, 2 * rho) == pytest.approx(2 * rho**2 / (1 + rho), rel=1e-12)
        assert mmc_wait_s(1, rho, 2.0) == pytest.approx(rho * 2.0 / (1 - rho), rel=1e-12)
    assert erlang_c(10**6, 1e-3) == 0.0
    assert erlang_c(4, 4.0) == 1.0 and mmc_wait_s(4, 4.0, 1.0) == float("inf")


def test_the_open_model_is_erlang_c_at_every_pool_of_a_jackson_network() -> None:
    """Four pools with different servers, demands and visits, no batching and no side
    holdings: each pool's wait per rollout is visits x C(c, a) x S / (c - a), with
    a = rate x demand and S = demand / visits, and e2e adds them to the bare rollout."""
    base = fleet_demand(load_scenario("codex-spark"), Transport.HTTP)
    shapes = {
        Pool.API: (6, 0.9, 30.0),
        Pool.STATE_STORE: (3, 0.2, 30.0),
        Pool.SAFETY: (4, 1.1, 60.0),
        Pool.INFERENCE: (10, 2.0, 30.0),
    }
    pools = {pool: PoolDemand(c, d, d, v, 0.0, 0.0, 0.0) for pool, (c, d, v) in shapes.items()}
    demand = FleetDemand(
        pools=pools,
        expectation=base.expectation,
        think_s=0.0,
        delay_s=10.0,
        decode_s=0.0,
        replicas=1,
        streams_per_replica=10,
        slowdown_per_stream=0.0,
    )
    rate = 2.5
    point = open_point(demand, rate)
    waits = 0.0
    for pool in POOLS:
        servers, demand_s, visits = shapes[pool]
        expected = visits * mmc_wait_s(servers, rate * demand_s, demand_s / visits)
        assert point.path_wait_s[pool] == pytest.approx(expected, rel=1e-12)
        assert point.utilization[pool] == pytest.approx(rate * demand_s / servers, rel=1e-12)
        assert point.queue_length[pool] == pytest.approx(rate * expected, rel=1e-12)
        waits += expected
    bare_s = 10.0 + sum(d for _, d, _ in shapes.values())
    assert point.e2e_s == pytest.approx(bare_s + waits, rel=1e-12)


def test_one_agent_alone_never_waits_in_the_closed_model() -> None:
    """One agent never waits: e2e and TTFT are the analytic engine's, utilization is
    throughput x demand / servers."""
    s = load_scenario("codex-spark-fleet")
    for transport in (Transport.HTTP, Transport.WS):
        demand = fleet_demand(s, transport)
        point = closed_curve(demand, 1)[0]
        assert point.e2e_s == pytest.approx(demand.e2e_s, rel=1e-12)
        assert point.ttft_s == pytest.approx(demand.expectation.ttft_mean_s, rel=1e-12)
        assert sum(point.path_wait_s.values()) == 0.0
        rate = 1 / (demand.think_s + demand.e2e_s)
        assert point.rollouts_per_s == pytest.approx(rate, rel=1e-12)
