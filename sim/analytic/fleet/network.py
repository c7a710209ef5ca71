"""The analytic fleet: the pools as a queueing network, solved in milliseconds.

Closed load is an exact multi-server MVA (``sim.analytic.fleet.queueing``) of the
pools and a delay (think time and everything that holds no pool); open load is
a Jackson network with Erlang C at each pool.  Both are exact for exponential
service; the fleet departs from that, and what that costs is measured against
the DES (``tests/test_fleet_model.py``, ``docs/load.md``).  Three parts of the
fleet are not product form and are approximated:

- **side holdings** (overlapped post work, the parallel classifiers) load their
  pool; the overlapped post work is off the path.  The parallel classifiers are
  waited for, and their jobs are not held back by the population: each arrives
  as its turn's blocking classifier leaves, whatever the others do.  The arrival
  theorem counts every job at the pool as a customer kept elsewhere while it
  waits, so it finds about half the queue the DES does there (at the codex-spark
  knee over HTTP: 4.2 waiting against 7.3), while the DES's parallel jobs hide
  most of their own wait behind prefill (4 ms a turn exposed of 23).  So a
  pool's whole wait per cycle, ``D / c x E[(J - c + 1)+]``, lies on the path,
  its joined side visits counted as path visits: the closed class of a mixed
  network, whose demand the open class's load stretches to
  ``D_path / (1 - U_side)``, which is ``D`` at saturation (Lazowska, Zahorjan,
  Graham and Sevcik, *Quantitative System Performance*, 1984, ch. 7).
- **the batching curve**: an arriving stream joins the least-loaded replica,
  which then holds about ``busy / replicas - 1/2`` other streams (``busy`` from
  the previous population, as the arrival theorem has it), and its decode is
  stretched by ``1 + slowdown x others``.
- **the nested state store** is a pool of its own whose time is also part of
  the API worker's demand; with at least as many slots as API workers it can
  never queue and is a delay.

Per-visit waits are the same for every visit of a pool (FIFO, as in the
model), so a pool's wait splits over its visits by count.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from models.stages import POOLS, Pool
from sim.analytic.fleet.demand import FleetDemand
from sim.analytic.fleet.point import FleetPoint
from sim.analytic.fleet.point_effects import limited, queued
from sim.analytic.fleet.queueing import MvaRows, closed_mva, erlang_c, mmc_wait_s
from sim.analytic.fleet.rate_limit import overload_reason
from sim.analytic.fleet.replica_queues import pooled

_INFERENCE = POOLS.index(Pool.INFERENCE)
_FIXED_POINT_STEPS = 200
_NEVER_QUEUES = 2**60
"""Servers of a pool that can never queue, as the solvers see it."""


class _Network:
    """The fleet's pools as MVA or Jackson stations, in ``POOLS`` order."""

    def __init__(self, demand: FleetDemand) -> None:
        self.d = demand
        pools = [demand.pools[p] for p in POOLS]
        self.servers = np.array([p.servers for p in pools], dtype=np.int64)
        self.queueing_servers = np.array(
            [p.servers if p.can_queue else _NEVER_QUEUES for p in pools], dtype=np.int64
        )
        self.base_s = np.array([p.demand_s for p in pools])
        self.visits = np.array([max(p.visits, 1e-300) for p in pools])
        self.path_share = np.array([p.path_s / p.demand_s if p.demand_s else 0.0 for p in pools])
        # The joined side holdings' waits are on the path (the module's docstring), and
        # before the first token, which the parallel classifiers gate.
        on_path = np.array([p.path_visits + p.joined_visits for p in pools])
        gating = np.array([p.visits_before_first_token + p.joined_visits for p in pools])
        self.path_visits = on_path / self.visits
        self.before_visits = gating
        self.before_share = np.divide(gating, on_path, out=np.zeros_like(gating), where=on_path > 0)

    def stretch_s(self, busy: np.ndarray) -> np.ndarray:
        """Extra decode seconds per rollout from the batch an arriving stream joins."""
        d = self.d
        others = np.clip(busy / d.replicas - 0.5, 0.0, d.streams_per_replica - 1)
        return d.decode_s * d.slowdown_per_stream * others

    def demand_s(self, rows: MvaRows | None) -> np.ndarray:
        """Per row: the demands, with decode stretched by the batch an arrival meets."""
        if rows is None:
            return self.base_s[None, :]
        demand = np.repeat(self.base_s[None, :], rows.throughput_per_s.size, axis=0)
        busy = rows.throughput_per_s * rows.demand_s[:, _INFERENCE]
        demand[:, _INFERENCE] += self.stretch_s(busy)
        return demand

    def cycle_s(self, demand: np.ndarray, wait: np.ndarray, probability: np.ndarray) -> np.ndarray:
        """Think time + the rollout's critical path: its path service and its path waits
        (``wait_probability``, part of the solver's interface, is not needed)."""
        return self.d.delay_s + demand @ self.path_share + wait @ self.path_visits

    def point(
        self,
        agents: int | None,
        rate: float,
        demand: np.ndarray,
        wait: np.ndarray,
        probability: np.ndarray,
    ) -> FleetPoint:
        """One load's results.  A closed population's cycle is ``agents / rate``; where the
        throughput bound made it longer than the path, the rest is waiting at the
        bottleneck."""
        d = self.d
        path_cycle_s = float(self.cycle_s(demand[None, :], wait[None, :], probability[None, :])[0])
        cycle_s = path_cycle_s if agents is None else max(path_cycle_s, agents / rate)
        path_wait = wait * self.path_visits
        bottleneck = int(np.argmax(demand / self.servers))
        beyond_s = cycle_s - path_cycle_s
        path_wait[bottleneck] += beyond_s
        first_token = (wait / self.visits) @ self.before_visits
        first_token += beyond_s * self.before_share[bottleneck]
        return FleetPoint(
            agents=agents,
            rollouts_per_s=rate,
            e2e_s=cycle_s - d.think_s,
            ttft_s=float((d.expectation.ttft_sum_s + first_token) / d.turns),
            utilization={p: float(rate * demand[i] / self.servers[i]) for i, p in enumerate(POOLS)},
            queue_length={p: float(rate * wait[i]) for i, p in enumerate(POOLS)},
            residence_s={p: float(demand[i] + wait[i]) for i, p in enumerate(POOLS)},
            path_wait_s={p: float(path_wait[i]) for i, p in enumerate(POOLS)},
            wait_probability={p: float(probability[i]) for i, p in enumerate(POOLS)},
            decode_s=float(d.decode_s + demand[_INFERENCE] - self.base_s[_INFERENCE]),
        )


def closed_curve(
    demand: FleetDemand, max_agents: int, wanted: Sequence[int] | None = None
) -> list[FleetPoint]:
    """The fleet at every population 1 .. ``max_agents`` (exact multi-server MVA), with the
    replicas' own queues and the rate limits (``sim.analytic.fleet.point_effects``); only
    the populations ``wanted`` get those (default: all), the rest stay the network's."""
    net = _Network(demand)
    curve = [
        net.point(
            step.population,
            step.throughput_per_s,
            step.demand_s,
            step.wait_s,
            step.wait_probability,
        )
        for step in closed_mva(net.queueing_servers, max_agents, net.demand_s, net.cycle_s)
    ]
    adjusted = range(1, max_agents + 1) if wanted is None else wanted
    routing = demand.replica_routing
    queues = routing is not None and not pooled(routing)
    out = list(curve)
    for agents in adjusted:
        point = curve[agents - 1]
        if queues and routing is not None:
            point = queued(point, demand, routing)
        if demand.limit is not None:
            point = limited(curve, demand, demand.limit, agents, point)
        out[agents - 1] = point
    return out


def open_point(demand: FleetDemand, rollouts_per_s: float) -> FleetPoint:
    """The fleet under Poisson arrivals: Erlang C at each pool (a Jackson network); the
    inference demand, stretched by the batch it makes, is a fixed point."""
    net = _Network(demand)
    rate = rollouts_per_s
    demand_s = net.base_s.copy()
    if overload_reason(demand.rate_cap, rate) is not None:
        return _unstable(net, rate, demand_s)
    for _ in range(_FIXED_POINT_STEPS):
        stretched = net.base_s[_INFERENCE] + float(net.stretch_s(rate * demand_s[_INFERENCE]))
        converged = abs(stretched - demand_s[_INFERENCE]) <= 1e-12 * stretched
        demand_s[_INFERENCE] = stretched
        if converged or rate * stretched >= net.servers[_INFERENCE]:
            break
    wait = np.zeros_like(demand_s)
    probability = np.zeros_like(demand_s)
    for i in range(demand_s.size):
        offered, servers = rate * demand_s[i], net.queueing_servers[i]
        if offered >= servers:
            return _unstable(net, rate, demand_s)
        probability[i] = erlang_c(int(servers), offered)
        wait[i] = mmc_wait_s(int(servers), offered, demand_s[i])
    point = net.point(None, rate, demand_s, wait, probability)
    routing = demand.replica_routing
    if routing is not None and not pooled(routing):
        point = queued(point, demand, routing)
    return point if np.isfinite(point.e2e_s) else _unstable(net, rate, demand_s)


def _unstable(net: _Network, rate: float, demand_s: np.ndarray) -> FleetPoint:
    infinite = {p: float("inf") for p in POOLS}
    return FleetPoint(
        agents=None,
        rollouts_per_s=rate,
        e2e_s=float("inf"),
        ttft_s=float("inf"),
        utilization={p: float(rate * demand_s[i] / net.servers[i]) for i, p in enumerate(POOLS)},
        queue_length=infinite,
        residence_s=infinite,
        path_wait_s=infinite,
        wait_probability={p: 1.0 for p in POOLS},
        decode_s=float("inf"),
        stable=False,
    )
