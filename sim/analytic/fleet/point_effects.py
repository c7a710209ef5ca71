"""What the rate limits and the replicas' own queues do to a point of the queueing network.

The network (``sim.analytic.fleet.network``) solves the pools with the fleet's
inference slots as one queue and no limit at the gateway; these adjust each
point: ``queued`` for replicas that queue on their own (``replica_queues``),
``limited`` for the organizations' rate limits (``rate_limit``).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from models.kv_cache import Routing
from models.stages import Pool
from sim.analytic.fleet.demand import FleetDemand
from sim.analytic.fleet.point import FleetPoint
from sim.analytic.fleet.rate_limit import LimitModel
from sim.analytic.fleet.replica_queues import Replica, queued_cycle_s, visit_s

_LIMIT_STEPS = 4


def queued(point: FleetPoint, d: FleetDemand, routing: Routing) -> FleetPoint:
    """The point with each replica queueing on its own (``replica_queues``): a closed
    population's throughput falls with the longer waits, open arrivals keep theirs."""
    turns = d.turns
    prefill_s = d.pools[Pool.INFERENCE].demand_s - d.decode_s
    pooled_s = point.path_wait_s[Pool.INFERENCE] + prefill_s + point.decode_s
    replica = Replica(
        d.streams_per_replica, prefill_s / turns, d.decode_s / turns, d.slowdown_per_stream
    )
    rest_s = point.e2e_s + d.think_s - pooled_s
    if point.agents is None:
        rate = point.rollouts_per_s
        live = rate * point.e2e_s
        think_visit_s = max((point.e2e_s - pooled_s) / turns, 1e-12)
        at_s, waiting_s = visit_s(
            routing, d.replicas, replica, rate * turns, think_visit_s, live, turns
        )
        cycle_s = rest_s + at_s * turns
    else:
        cycle_s, at_s, waiting_s = queued_cycle_s(
            routing, d.replicas, replica, point.agents, turns, rest_s, d.think_s
        )
        rate = point.agents / cycle_s
    scale = rate / point.rollouts_per_s
    added_s = at_s * turns - pooled_s
    path_wait = {**point.path_wait_s, Pool.INFERENCE: waiting_s * turns}
    queue_length = {p: q * scale for p, q in point.queue_length.items()}
    queue_length[Pool.INFERENCE] = rate * turns * waiting_s
    return replace(
        point,
        rollouts_per_s=rate,
        e2e_s=cycle_s - d.think_s,
        ttft_s=point.ttft_s + (waiting_s * turns - point.path_wait_s[Pool.INFERENCE]) / turns,
        utilization={p: u * scale for p, u in point.utilization.items()},
        queue_length=queue_length,
        residence_s={
            **point.residence_s,
            Pool.INFERENCE: point.residence_s[Pool.INFERENCE] + added_s,
        },
        path_wait_s=path_wait,
        decode_s=(at_s - waiting_s) * turns - prefill_s,
    )


def limited(
    curve: list[FleetPoint], d: FleetDemand, model: LimitModel, agents: int, own: FleetPoint
) -> FleetPoint:
    """The point of ``agents`` under the rate limit (``sim.analytic.fleet.rate_limit``): the
    pools see the population whose unlimited throughput is the admitted one, and the rest
    of the cycle is refused."""
    throughputs = [p.rollouts_per_s for p in curve]
    base = own
    limited = model.limited(model.turn_s, agents)
    if limited.refused_s_per_turn == 0.0:
        return own
    for _ in range(_LIMIT_STEPS):
        waits_s = (sum(base.path_wait_s.values()) + base.decode_s - d.decode_s) / d.turns
        limited = model.limited(model.turn_s + waits_s, agents)
        rate = agents / (limited.e2e_s + d.think_s)
        below = max(bisect_right(throughputs, rate), 1) - 1
        if curve[below] is base:
            break
        base = curve[below]
    rate = agents / (limited.e2e_s + d.think_s)
    scale = rate / base.rollouts_per_s
    wait_s = max(0.0, limited.e2e_s - base.e2e_s)
    return replace(
        base,
        agents=agents,
        rollouts_per_s=rate,
        e2e_s=limited.e2e_s,
        ttft_s=base.ttft_s + wait_s / d.turns,
        utilization={p: u * scale for p, u in base.utilization.items()},
        queue_length={p: q * scale for p, q in base.queue_length.items()},
        rate_limit_wait_s=wait_s,
        refused_per_request=limited.refused_per_request,
    )
