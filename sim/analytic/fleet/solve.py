"""One load point of the analytic fleet, its KV residency and its queueing solved together.

With KV residency the hit rate depends on the load (how many sessions share a
replica, how long their gaps last with the pools' waits in them) and the load
on the hit rate (a miss prefills the history again), so a point is a fixed
point: the network at the demand of the hit rate, the hit rate at the
network's throughput and waits, until the end-to-end time settles.
"""

from __future__ import annotations

from models.scenario import Scenario
from sim.analytic.fleet.demand import FleetDemand, fleet_demand
from sim.analytic.fleet.network import closed_curve, open_point
from sim.analytic.fleet.point import FleetPoint
from sim.analytic.fleet.residency import Contention
from sim.turn.transports import Transport

STEPS = 8
TOLERANCE = 1e-4
"""Relative change of the end-to-end time at which the fixed point stops."""


def solve(scenario: Scenario, transport: Transport) -> tuple[FleetDemand, FleetPoint]:
    """The demand and the point of ``scenario``'s load."""
    demand = fleet_demand(scenario, transport)
    point = _point(demand, scenario)
    if not scenario.kv_cache.residency:
        return demand, point
    for _ in range(STEPS):
        if not point.stable:
            break
        waits_s = sum(point.path_wait_s.values()) / demand.turns
        stretch = point.decode_s / demand.decode_s if demand.decode_s > 0 else 1.0
        contention = Contention(point.rollouts_per_s, waits_s, stretch)
        demand = fleet_demand(scenario, transport, contention)
        settled = _point(demand, scenario)
        done = abs(settled.e2e_s - point.e2e_s) <= TOLERANCE * point.e2e_s
        point = settled
        if done:
            break
    return demand, point


def _point(demand: FleetDemand, scenario: Scenario) -> FleetPoint:
    load = scenario.load
    if load.kind == "closed":
        return closed_curve(demand, load.agents, [load.agents])[load.agents - 1]
    return open_point(demand, load.rollouts_per_s)
