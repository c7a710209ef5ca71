"""Summaries of fleet runs: latency, throughput, utilization, stability, with CIs.

Confidence intervals come from independent replications: the statistic is
computed in each replication and a Student-t interval is taken across them.
Percentiles pool the measured rollouts (or turns) of all replications.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.special import stdtrit

from models.scenario import Scenario
from models.stages import POOLS, STAGE_COLUMN, Pool, Stage
from sim.analysis.fleet_results import FleetStats, LoadPoint, MeanCi
from sim.analysis.metrics import Metric
from sim.analysis.results import Estimate, Latency, RunResult
from sim.engine.analytic import Expectation, expect
from sim.engine.records import concatenate
from sim.engine.replication import Replication
from sim.engine.runners import simulate_fleet
from sim.engine.transports import Transport

CI_METHOD = "Student-t 95% interval across independent replications"
FLEET_ENGINE = "des-fleet"
"""The engine name a fleet result reports."""


def run_fleet(
    scenario: Scenario, transport: Transport, trace_rollouts: int = 0
) -> list[Replication]:
    """All replications of one load point (the first keeps turns of ``trace_rollouts``)."""
    return [
        simulate_fleet(scenario, transport, r, trace_rollouts if r == 0 else 0)
        for r in range(scenario.load.replications)
    ]


def pool_demand_s(scenario: Scenario, expectation: Expectation) -> dict[Pool, float]:
    """Expected busy time one rollout puts on each pool, per server (analytic, no queueing).

    Each pool is charged with the stages the stage table says hold it; the API
    workers with all API work, overlapped post-inference work included.
    Inference is charged at the lone-stream decode rate (a lower bound on its
    load) and the state store with the whole ``state_load`` stage (an upper bound).
    """
    busy_s = {pool: 0.0 for pool in POOLS}
    for stage in Stage:
        if stage.pool is not None and stage.pool is not Pool.API:
            busy_s[stage.pool] += float(expectation.stage_s[STAGE_COLUMN[stage]])
    busy_s[Pool.API] = expectation.api_cpu_s
    servers = scenario.capacity.servers()
    return {pool: busy_s[pool] / servers[pool] for pool in POOLS}


def offered_load(scenario: Scenario, transport: Transport) -> dict[Pool, float]:
    """Offered load per pool under open arrivals (>= 1 means the queue grows forever)."""
    demand = pool_demand_s(scenario, expect(scenario, transport))
    return {pool: scenario.load.rollouts_per_s * s for pool, s in demand.items()}


def fleet_result(
    spec_text: str, scenario: Scenario, transport: Transport, replications: list[Replication]
) -> RunResult:
    """The result of one load point (the keys of ``run --json`` plus the fleet's)."""
    load = scenario.load
    closed = load.kind == "closed"
    point = LoadPoint(
        load.kind,
        load.agents if closed else None,
        None if closed else load.rollouts_per_s,
        load.warmup_s,
        load.duration_s,
    )
    stable, offered, reason = _stability(scenario, transport, replications)
    stats = FleetStats(point, len(replications), CI_METHOD, stable, offered, reason)
    pooled = concatenate([r.records for r in replications])
    head = {
        "spec": spec_text,
        "scenario": scenario.name,
        "transport": transport,
        "engine": FLEET_ENGINE,
        "seed": scenario.seed,
        "rollouts": pooled.count,
    }
    if not stable or pooled.count == 0:
        return RunResult(**head, e2e_s=None, ttft_s=None, fleet=stats)
    per_rep = [r.records for r in replications]
    stats = replace(
        stats,
        throughput={
            Metric.TURNS_PER_S: _mean_ci([r.turns_completed / r.window_s for r in replications]),
            Metric.OUTPUT_TOKENS_PER_S: _mean_ci(
                [r.output_tokens_completed / r.window_s for r in replications]
            ),
            Metric.ROLLOUTS_PER_S: _mean_ci(
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
        fleet=stats,
    )


def fleet_reductions(a: list[Replication], b: list[Replication]) -> dict[Metric, Estimate]:
    """Reductions of b relative to a, paired by replication (same seeds), t-interval."""
    measures = {
        Metric.E2E_REDUCTION: lambda r: r.records.e2e_s.mean(),
        Metric.TTFT_REDUCTION: lambda r: r.records.ttft_sum_s.sum() / r.records.turns.sum(),
        Metric.API_CPU_REDUCTION: lambda r: r.records.api_cpu_s.mean(),
    }
    out = {}
    for metric, measure in measures.items():
        summary = _mean_ci([1.0 - measure(rb) / measure(ra) for ra, rb in zip(a, b, strict=True)])
        out[metric] = Estimate(summary.mean, summary.ci95)
    return out


def _stability(
    scenario: Scenario, transport: Transport, replications: list[Replication]
) -> tuple[bool, dict[Pool, float] | None, str | None]:
    if scenario.load.kind == "closed":
        return True, None, None
    offered = offered_load(scenario, transport)
    worst = max(offered, key=offered.get)
    if offered[worst] < 1.0:
        return True, offered, None
    backlog = float(np.mean([r.mean_in_system for r in replications]))
    at_end = float(np.mean([r.in_system_at_end for r in replications]))
    reason = (
        f"offered load on the {worst} pool is {offered[worst]:.2f}x its capacity: "
        f"the queue grows without bound (rollouts in system: {backlog:.0f} on average over "
        f"the window, {at_end:.0f} at its end; means are not reported)"
    )
    return False, offered, reason


def _latency(pooled: np.ndarray, replication_means: list[float]) -> Latency:
    p50, p95, p99 = np.percentile(pooled, [50, 95, 99])
    return Latency(
        float(pooled.mean()), float(p50), float(p95), float(p99), _mean_ci(replication_means).ci95
    )


def _mean_ci(values: list[float]) -> MeanCi:
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if array.size < 2:
        return MeanCi(mean, None)
    half = float(stdtrit(array.size - 1, 0.975) * array.std(ddof=1) / np.sqrt(array.size))
    return MeanCi(mean, (mean - half, mean + half))
