"""What one rollout asks of each pool: service demand and visits, from the stage table
and the analytic engine (no queueing).

The phases of a turn (``sim.turn.phases.PHASES``) say which stages hold which
pool; the side table adds the work held off the critical path.  Each pool gets
its expected busy seconds per rollout (its demand) and its acquisitions per
rollout, split into those on the turn's path before the first token, on the
path after it, joined side holdings (waited for, behind prefill) and side
holdings nobody waits for.  Everything else a rollout does holds no pool: with
the think time it is the delay of the closed model.

The analytic engine gives per-rollout stage seconds, API work and classifier
work.  The parallel classifiers' own seconds are not among its fields; they are
the classifier work less that of the same scenario with the parallel
classifiers' costs at zero (the blocking work does not depend on them, except
through the WebSocket rotation probability, which moves with the milliseconds
of their overrun).  Acquisitions are counted as one per turn for each phase or
holding whose expected seconds are positive: true for ``http``, ``http-full``
and ``ws``; ``ws-append`` runs post-inference work once per rollout, so its
overlapped visits are over-counted (which only moves how its API wait is split
between the path and off it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.kv_cache import Routing
from models.scenario import Scenario
from models.stages import POOLS, STAGE_COLUMN, Pool, Side, Stage
from sim.analytic.agent.engine import expect, expect_turns
from sim.analytic.agent.expectations import Expectation
from sim.analytic.fleet.rate_limit import LimitModel, RateCap, limit_model
from sim.analytic.fleet.residency import Contention, fleet_missing
from sim.turn.phases import JOINED_SIDES, PHASES
from sim.turn.transports import Transport

_NEGLIGIBLE_S = 1e-12


@dataclass(frozen=True)
class PoolDemand:
    """One pool's share of a rollout: busy seconds and acquisitions (expected values)."""

    servers: int
    demand_s: float
    """Busy server-seconds per rollout (inference: at the lone-stream decode rate)."""
    path_s: float
    """The part of ``demand_s`` on the rollout's critical path (a nested pool's is inside
    its outer pool's, so it counts none)."""
    visits_before_first_token: float
    visits_after_first_token: float
    joined_visits: float
    """Side holdings the turn waits for behind the stages they run alongside."""
    unjoined_visits: float
    can_queue: bool = True
    """False for a nested pool with at least as many servers as its outer pool has."""

    @property
    def visits(self) -> float:
        return (
            self.visits_before_first_token
            + self.visits_after_first_token
            + self.joined_visits
            + self.unjoined_visits
        )

    @property
    def path_visits(self) -> float:
        return self.visits_before_first_token + self.visits_after_first_token


@dataclass(frozen=True)
class FleetDemand:
    """A rollout of one scenario under one transport, as the fleet models see it."""

    pools: dict[Pool, PoolDemand]
    expectation: Expectation
    think_s: float
    delay_s: float
    """Think time plus every second of the rollout that holds no pool."""
    decode_s: float
    """Decode seconds per rollout at the lone-stream rate (the batching curve stretches it)."""
    replicas: int
    streams_per_replica: int
    slowdown_per_stream: float
    replica_routing: Routing | None = None
    """With KV residency, the routing that picks the replica a request queues at (None:
    one queue for every slot of the fleet)."""
    limit: LimitModel | None = None
    """The organizations' binding rate limit as the agents meet it (None: no limit)."""

    @property
    def rate_cap(self) -> RateCap | None:
        """What the organizations' rate limits admit (None: no limit)."""
        return None if self.limit is None else self.limit.cap

    @property
    def turns(self) -> float:
        return self.expectation.turns

    @property
    def e2e_s(self) -> float:
        """Mean end-to-end time without contention."""
        return self.expectation.e2e_s

    def saturated_inference_s(self) -> float:
        """Inference demand with every replica's batch full (the slowest decode)."""
        full = self.slowdown_per_stream * (self.streams_per_replica - 1)
        return self.pools[Pool.INFERENCE].demand_s + self.decode_s * full

    def bottleneck(self) -> tuple[Pool, float]:
        """The pool whose demand per server is largest (at full batches), and that demand."""
        per_server = {
            pool: (self.saturated_inference_s() if pool is Pool.INFERENCE else d.demand_s)
            / d.servers
            for pool, d in self.pools.items()
        }
        pool = max(per_server, key=per_server.__getitem__)
        return pool, per_server[pool]

    def offered_load(self, rollouts_per_s: float) -> dict[Pool, float]:
        """Offered load per pool under open arrivals at ``rollouts_per_s``: arrival rate x
        demand per rollout / servers (>= 1 means the queue grows forever)."""
        return {pool: rollouts_per_s * d.demand_s / d.servers for pool, d in self.pools.items()}

    def saturation_agents(self) -> float:
        """N* = (think + e2e) / the bottleneck's demand per server, or times the rate limits'
        cap when that is lower: the population at which the asymptotic bounds on
        throughput cross."""
        most_per_s = 1.0 / self.bottleneck()[1]
        if self.rate_cap is not None:
            most_per_s = min(most_per_s, self.rate_cap.rollouts_per_s)
        return (self.think_s + self.e2e_s) * most_per_s


def fleet_demand(
    scenario: Scenario, transport: Transport, contention: Contention | None = None
) -> FleetDemand:
    """The demand and visits of one rollout on each pool of ``scenario.capacity``; with KV
    residency, at the hit rate the fleet's load gives (``sim.analytic.fleet.residency``):
    uncontended, or at ``contention``'s throughput and waits."""
    missing = None
    needs_turns = scenario.kv_cache.residency or scenario.rate_limit.limits
    table = expect_turns(scenario, transport) if needs_turns else None
    if table is not None and scenario.kv_cache.residency:
        missing = fleet_missing(scenario, transport, table, contention)
    e = expect(scenario, transport, missing)
    blocking_only = scenario.model_copy(
        update={
            "safety": scenario.safety.model_copy(
                update={"parallel_fixed_ms": 0.0, "parallel_per_1k_tokens_ms": 0.0}
            )
        }
    )
    stage = {s: float(e.stage_s[STAGE_COLUMN[s]]) for s in Stage}
    blocking_s = expect(blocking_only, transport, missing).safety_cpu_s
    side_s = {
        Side.PARALLEL_SAFETY: max(0.0, e.safety_cpu_s - blocking_s),
        Side.OVERLAPPED_POST: max(
            0.0,
            e.api_cpu_s
            - sum(stage[s] for phase in PHASES if phase.pool is Pool.API for s in phase.stages),
        ),
    }
    held = dict(stage)
    held[Stage.SAFETY] = min(stage[Stage.SAFETY], blocking_s)
    overrun_s = stage[Stage.SAFETY] - held[Stage.SAFETY]
    held[Stage.PREFILL] += overrun_s  # the turn waits out the overrun holding its slot
    turns = e.turns
    parts: dict[Pool, dict[str, float]] = {
        pool: dict.fromkeys(("demand", "path", "before", "after", "joined", "unjoined"), 0.0)
        for pool in POOLS
    }
    for phase in PHASES:
        if phase.pool is None:
            continue
        seconds = sum(held[s] for s in phase.stages)
        if seconds > _NEGLIGIBLE_S:
            part = parts[phase.pool]
            part["demand"] += seconds
            part["path"] += seconds
            part["before" if phase.before_first_token else "after"] += turns
        if phase.inner is not None:
            inner_s = sum(held[s] for s in phase.inner_stages)
            if inner_s > _NEGLIGIBLE_S:
                parts[phase.inner]["demand"] += inner_s
                parts[phase.inner]["before" if phase.before_first_token else "after"] += turns
    for side, seconds in side_s.items():
        if seconds > _NEGLIGIBLE_S:
            part = parts[side.info.pool]
            part["demand"] += seconds
            part["joined" if side in JOINED_SIDES else "unjoined"] += turns
    servers = scenario.capacity.servers()
    pools = {
        pool: PoolDemand(
            servers[pool],
            p["demand"],
            p["path"],
            p["before"],
            p["after"],
            p["joined"],
            p["unjoined"],
            # Every read of a nested pool is made by a busy server of its outer pool.
            pool.held_within is None or servers[pool] < servers[pool.held_within],
        )
        for pool, p in parts.items()
    }
    on_path = sum(d.path_s for d in pools.values())
    c = scenario.capacity
    return FleetDemand(
        pools=pools,
        expectation=e,
        think_s=scenario.load.think_time_s.mean,
        delay_s=scenario.load.think_time_s.mean + e.e2e_s - on_path,
        decode_s=stage[Stage.DECODE],
        replicas=c.inference_replicas,
        streams_per_replica=c.streams_per_replica,
        replica_routing=(
            scenario.kv_cache.routing(transport.is_websocket)
            if scenario.kv_cache.residency
            else None
        ),
        slowdown_per_stream=c.decode_slowdown_per_stream,
        limit=None
        if table is None
        else limit_model(scenario, e, table, _reprefill_s(scenario, missing)),
    )


def _reprefill_s(scenario: Scenario, missing: np.ndarray | None) -> np.ndarray | None:
    """Each turn's prefill of the history its replica no longer holds."""
    if missing is None:
        return None
    i = scenario.inference
    return i.prefix_cache_hit_fraction * missing / i.prefill_tps
