"""Load points from the analytic fleet, as the same results the DES gives (``RunResult``).

The analytic fleet gives means only: no percentiles and no intervals; the
budget is the analytic engine's with the queue stage filled in by the model's
path waits and decode stretched by the batch.
"""

from __future__ import annotations

from typing import Any

from models.scenario import Scenario
from models.scenario_hash import scenario_hash
from models.stages import POOLS, STAGE_COLUMN, Stage
from sim.analysis.fleet_results import FleetHead, FleetStats, MeanCi, RateLimited
from sim.analysis.fleet_summary import load_point, overload
from sim.analysis.metrics import Metric
from sim.analysis.results import FleetResult, Latency, RunResult, UnmeasuredPoint
from sim.analytic.agent.expectations import Approximation
from sim.analytic.fleet.approximations import fleet_flags
from sim.analytic.fleet.demand import FleetDemand, fleet_demand
from sim.analytic.fleet.network import closed_curve, open_point
from sim.analytic.fleet.point import FleetPoint
from sim.analytic.fleet.rate_limit import overload_reason
from sim.analytic.fleet.solve import solve
from sim.turn.transports import Transport

ANALYTIC_FLEET_ENGINE = "analytic-fleet"
ANALYTIC_METHOD = (
    "analytic: exact multi-server MVA (closed load) or Erlang C per pool (open load) "
    "over the analytic engine's demands; means only, no intervals"
)


def analytic_points(
    spec_text: str, scenarios: list[Scenario], transport: Transport
) -> list[FleetResult]:
    """One result per load point, all from one demand and (closed load) one MVA curve; with
    KV residency the hit rate moves with the load, so each point has its own demand, solved
    with its queueing (``sim.analytic.fleet.solve``)."""
    if scenarios[0].kv_cache.residency:
        return [
            _result(spec_text, scenario, transport, *solve(scenario, transport))
            for scenario in scenarios
        ]
    demand = fleet_demand(scenarios[0], transport)
    closed = [s.load.agents for s in scenarios if s.load.kind == "closed"]
    curve = closed_curve(demand, max(closed)) if closed else []
    results = []
    for scenario in scenarios:
        load = scenario.load
        if load.kind == "closed":
            point = curve[load.agents - 1]
        else:
            point = open_point(demand, load.rollouts_per_s)
        results.append(_result(spec_text, scenario, transport, demand, point))
    return results


def _result(
    spec_text: str,
    scenario: Scenario,
    transport: Transport,
    demand: FleetDemand,
    point: FleetPoint,
) -> FleetResult:
    rate = scenario.load.rollouts_per_s
    offered = demand.offered_load(rate) if scenario.load.kind == "open" else None
    reason = None
    # Only open load can overload the fleet: a closed population's MVA point is always stable.
    if offered is not None and not point.stable:
        cap_reason = overload_reason(demand.rate_cap, rate)
        why = (
            cap_reason
            or overload(offered)
            or "decode stretched by the batch saturates the inference slots"
        )
        reason = f"{why} (means are not reported)"
    fleet = FleetHead(
        load_point(scenario), 0, ANALYTIC_METHOD, point.stable, offered, reason, None, True
    )
    head: dict[str, Any] = {
        "spec": spec_text,
        "scenario": scenario.name,
        "transport": transport,
        "engine": ANALYTIC_FLEET_ENGINE,
        "seed": None,
        "rollouts": None,
        "scenario_hash": scenario_hash(scenario),
    }
    if not point.stable:
        return UnmeasuredPoint(**head, fleet=fleet)
    e = demand.expectation
    budget = {stage: float(e.stage_s[STAGE_COLUMN[stage]]) for stage in Stage}
    budget[Stage.QUEUE] = sum(point.path_wait_s.values())
    budget[Stage.DECODE] = point.decode_s
    budget[Stage.RETRY] += point.rate_limit_wait_s
    turns_per_s = point.rollouts_per_s * e.turns
    stats = FleetStats(
        **vars(fleet),
        throughput={
            Metric.TURNS_PER_S: MeanCi(turns_per_s, None),
            Metric.OUTPUT_TOKENS_PER_S: MeanCi(
                turns_per_s * scenario.workload.output_tokens.mean, None
            ),
            Metric.ROLLOUTS_PER_S: MeanCi(point.rollouts_per_s, None),
        },
        utilization={pool: MeanCi(point.utilization[pool], None) for pool in POOLS},
        mean_queue_length=dict(point.queue_length),
        wait_s_per_turn={pool: point.path_wait_s[pool] / e.turns for pool in POOLS},
        mean_rollouts_in_system=point.in_system,
        rate_limit=_rate_limited(scenario, point, e.turns),
    )
    return RunResult(
        **head,
        e2e_s=Latency(point.e2e_s),
        ttft_s=Latency(point.ttft_s),
        budget_s=budget,
        api_cpu_s_per_rollout=e.api_cpu_s,
        safety_cpu_s_per_rollout=e.safety_cpu_s,
        turns_per_rollout=e.turns,
        reconnects_per_rollout=e.cold_turns,
        prefix_cache_hit_rate=e.prefix_cache_hit_rate,
        fleet=stats,
        approximations=_approximations(e.approximations, demand, point),
    )


def _approximations(
    agent: tuple[str, ...], demand: FleetDemand, point: FleetPoint
) -> tuple[str, ...]:
    """The one-agent engine's flags (its residency replaced by the fleet's) and the fleet's,
    each of those with its bound."""
    kept = tuple(flag for flag in agent if flag != Approximation.PREFIX_RESIDENCY)
    return kept + fleet_flags(demand, point)


def _rate_limited(scenario: Scenario, point: FleetPoint, turns: float) -> RateLimited | None:
    if not scenario.rate_limit.limits:
        return None
    per_minute = point.rollouts_per_s * turns * 60.0 / scenario.rate_limit.organizations
    return RateLimited(
        MeanCi(per_minute, None), point.refused_per_request, point.rate_limit_wait_s / turns
    )
