"""Summaries of fleet runs: latency, throughput, utilization, stability, with CIs.

Each replication is measured from its detected warm-up cut (``sim.analysis.warmup``).
Confidence intervals come from independent replications: the statistic is
computed in each replication and a Student-t interval is taken across them
(throughput's on the log scale, so it stays positive).  Percentiles pool the
measured rollouts (or turns) of all replications.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import numpy as np

from models.scenario import Scenario
from models.scenario_hash import scenario_hash
from models.stages import POOLS, STAGE_COLUMN, Pool, Stage
from sim.analysis.fleet_need import check_fleet
from sim.analysis.fleet_results import FleetHead, FleetStats, LoadPoint, MeanCi, RateLimited
from sim.analysis.metrics import Metric
from sim.analysis.results import Estimate, FleetResult, Latency, RunResult, UnmeasuredPoint
from sim.analysis.stats import log_t_interval, t_interval
from sim.analysis.warmup import steady_state
from sim.analytic.fleet.demand import fleet_demand
from sim.analytic.fleet.rate_limit import overload_reason
from sim.des.replication import Replication
from sim.des.runners import simulate_fleet
from sim.turn.records import RolloutRecords, concatenate
from sim.turn.transports import Transport

CI_METHOD = (
    "Student-t 95% interval across independent replications (throughput: on the log "
    "scale, so both bounds stay positive); each replication measured from its MSER-5 "
    "warm-up cut"
)
FLEET_ENGINE = "des-fleet"
"""The engine name a fleet result reports."""


def run_fleet(
    scenario: Scenario,
    transport: Transport,
    trace_rollouts: int = 0,
    executor: Executor | None = None,
    indices: range | None = None,
    what: str | None = None,
) -> list[Replication]:
    """The replications ``indices`` of one load point (default: all ``load.replications``),
    here one after another or in parallel on ``executor``.  Replication 0 keeps the turns
    of ``trace_rollouts`` measured rollouts.

    The point is first checked against the caps and for a window long enough to measure
    (``check_fleet``); ``what`` names it in a refusal (default: scenario, transport, load).
    """
    check_fleet(
        what or f"{scenario.name}:{transport.value} at {load_point(scenario).label}",
        scenario,
        transport,
    )
    indices = range(scenario.load.replications) if indices is None else indices
    name = f"{os.getpid()}-{next(_RUNS)}"
    jobs = [
        (scenario, transport, r, trace_rollouts if r == 0 else 0, f"{name}/{r}") for r in indices
    ]
    if executor is None:
        return [simulate_fleet(*job) for job in jobs]
    futures = [executor.submit(simulate_fleet, *job) for job in jobs]
    return [future.result() for future in futures]


_RUNS = itertools.count()
"""Numbers the calls of ``run_fleet``, so each replication's progress has a name of its own."""


def offered_load(scenario: Scenario, transport: Transport) -> dict[Pool, float]:
    """Offered load per pool under open arrivals: arrival rate x demand per rollout /
    servers (>= 1 means the queue grows forever).  Inference at the lone-stream decode
    rate, a lower bound."""
    return fleet_demand(scenario, transport).offered_load(scenario.load.rollouts_per_s)


def fleet_result(
    spec_text: str, scenario: Scenario, transport: Transport, replications: list[Replication]
) -> FleetResult:
    """The result of one load point (the keys of ``run --json`` plus the fleet's)."""
    point = load_point(scenario)
    stable, offered, reason = _stability(scenario, transport, replications)
    steady = steady_state(replications)
    replications = steady.replications
    fleet = FleetHead(
        point, len(replications), CI_METHOD, stable, offered, reason, steady.cut_s, steady.settled
    )
    pooled = concatenate([r.records for r in replications])
    head: dict[str, Any] = {
        "spec": spec_text,
        "scenario": scenario.name,
        "transport": transport,
        "engine": FLEET_ENGINE,
        "seed": scenario.seed,
        "rollouts": pooled.count,
        "scenario_hash": scenario_hash(scenario),
    }
    if not stable or pooled.count == 0:
        return UnmeasuredPoint(**head, fleet=fleet)
    per_rep = [r.records for r in replications]
    stats = FleetStats(
        **vars(fleet),
        throughput={
            Metric.TURNS_PER_S: _rate_ci([r.turns_completed / r.window_s for r in replications]),
            Metric.OUTPUT_TOKENS_PER_S: _rate_ci(
                [r.output_tokens_completed / r.window_s for r in replications]
            ),
            Metric.ROLLOUTS_PER_S: _rate_ci(
                [r.rollouts_started / r.window_s for r in replications]
            ),
        },
        utilization={
            pool: _mean_ci([r.pools[pool].utilization for r in replications]) for pool in POOLS
        },
        mean_queue_length={
            pool: float(np.mean([r.pools[pool].mean_waiting for r in replications]))
            for pool in POOLS
        },
        wait_s_per_turn={
            pool: sum(r.wait_s_by_pool[pool] for r in replications) / pooled.turns.sum()
            for pool in POOLS
        },
        mean_rollouts_in_system=float(np.mean([r.mean_in_system for r in replications])),
        rate_limit=_rate_limited(scenario, replications, pooled),
    )
    budget = pooled.stage_s.mean(axis=0)
    return RunResult(
        **head,
        e2e_s=_latency(pooled.e2e_s, [r.e2e_s.mean() for r in per_rep]),
        ttft_s=_latency(pooled.turn_ttft_s, [r.ttft_sum_s.sum() / r.turns.sum() for r in per_rep]),
        budget_s={stage: float(budget[STAGE_COLUMN[stage]]) for stage in Stage},
        api_cpu_s_per_rollout=float(pooled.api_cpu_s.mean()),
        safety_cpu_s_per_rollout=float(pooled.safety_cpu_s.mean()),
        turns_per_rollout=float(pooled.turns.mean()),
        reconnects_per_rollout=float(pooled.cold_turns.mean()),
        prefix_cache_hit_rate=pooled.prefix_cache_hit_rate,
        fleet=stats,
    )


def load_point(scenario: Scenario) -> LoadPoint:
    """Who loads the fleet in ``scenario`` and over which window."""
    load = scenario.load
    closed = load.kind == "closed"
    return LoadPoint(
        load.kind,
        load.agents if closed else None,
        None if closed else load.rollouts_per_s,
        load.warmup_s,
        load.duration_s,
    )


def fleet_reductions(a: list[Replication], b: list[Replication]) -> dict[Metric, Estimate]:
    """Reductions of b relative to a, paired by replication (same seeds), t-interval; each
    replication measured from its warm-up cut, as in ``fleet_result``."""
    a, b = steady_state(a).replications, steady_state(b).replications
    measures: dict[Metric, Callable[[Replication], float]] = {
        Metric.E2E_REDUCTION: lambda r: r.records.e2e_s.mean(),
        Metric.TTFT_REDUCTION: lambda r: r.records.ttft_sum_s.sum() / r.records.turns.sum(),
        Metric.API_CPU_REDUCTION: lambda r: r.records.api_cpu_s.mean(),
    }
    out = {}
    for metric, measure in measures.items():
        summary = _mean_ci([1.0 - measure(rb) / measure(ra) for ra, rb in zip(a, b, strict=True)])
        out[metric] = Estimate(summary.mean, summary.ci95)
    return out


def overload(offered: dict[Pool, float]) -> str | None:
    """Why open load past a pool's capacity has no steady state (None when every pool copes)."""
    worst = max(offered, key=offered.__getitem__)
    if offered[worst] < 1.0:
        return None
    return (
        f"offered load on the {worst} pool is {offered[worst]:.2f}x its capacity: "
        "the queue grows without bound"
    )


def _stability(
    scenario: Scenario, transport: Transport, replications: list[Replication]
) -> tuple[bool, dict[Pool, float] | None, str | None]:
    if scenario.load.kind == "closed":
        return True, None, None
    demand = fleet_demand(scenario, transport)
    rate = scenario.load.rollouts_per_s
    offered = demand.offered_load(rate)
    reason = overload(offered) or overload_reason(demand.rate_cap, rate)
    if reason is None:
        return True, offered, None
    backlog = float(np.mean([r.mean_in_system for r in replications]))
    at_end = float(np.mean([r.in_system_at_end for r in replications]))
    reason += (
        f" (rollouts in system: {backlog:.0f} on average over the window, {at_end:.0f} at "
        "its end; means are not reported)"
    )
    return False, offered, reason


def _rate_limited(
    scenario: Scenario, replications: list[Replication], pooled: RolloutRecords
) -> RateLimited | None:
    if not scenario.rate_limit.limits:
        return None
    per_organization = 60.0 / scenario.rate_limit.organizations
    admitted = sum(r.requests_admitted for r in replications)
    return RateLimited(
        _rate_ci([r.requests_admitted / r.window_s * per_organization for r in replications]),
        sum(r.requests_refused for r in replications) / admitted if admitted else float("nan"),
        float(pooled.rate_limit_wait_s.sum() / pooled.turns.sum()),
    )


def _latency(pooled: np.ndarray, replication_means: list[float]) -> Latency:
    p50, p95, p99 = np.percentile(pooled, [50, 95, 99])
    return Latency(
        float(pooled.mean()), float(p50), float(p95), float(p99), _mean_ci(replication_means).ci95
    )


def _mean_ci(values: list[float]) -> MeanCi:
    array = np.asarray(values, dtype=float)
    return MeanCi(float(array.mean()), t_interval(array))


def _rate_ci(values: list[float]) -> MeanCi:
    array = np.asarray(values, dtype=float)
    return MeanCi(float(array.mean()), log_t_interval(array))
