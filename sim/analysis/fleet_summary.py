"""Summaries of fleet runs: latency, throughput, utilization, stability, with CIs.

Confidence intervals come from independent replications: the statistic is
computed in each replication and a Student-t interval is taken across them.
Percentiles pool the measured rollouts (or turns) of all replications.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import stdtrit

from models.scenario import Scenario
from models.stages import POOLS, STAGES, Stage
from sim.analysis.metrics import Metric
from sim.engine.analytic import Expectation, expect
from sim.engine.des import Replication
from sim.engine.records import concatenate
from sim.engine.runners import simulate_fleet
from sim.engine.transports import Transport

CI_METHOD = "Student-t 95% interval across independent replications"


def run_fleet(scenario: Scenario, transport: Transport) -> list[Replication]:
    """All replications of one load point."""
    return [simulate_fleet(scenario, transport, r) for r in range(scenario.load.replications)]


def pool_demand_s(scenario: Scenario, expectation: Expectation) -> dict[str, float]:
    """Expected busy time one rollout puts on each pool, per server (analytic, no queueing).

    Inference is charged at the lone-stream decode rate (a lower bound on its
    load) and the state store with the whole ``state_load`` stage (an upper bound).
    """
    budget = dict(zip(STAGES, expectation.stage_s, strict=True))
    c = scenario.capacity
    return {
        "api": expectation.api_cpu_s / c.api_workers,
        "state_store": float(budget[Stage.STATE_LOAD]) / c.state_store_slots,
        "safety": float(budget[Stage.SAFETY]) / c.safety_workers,
        "inference": float(budget[Stage.PREFILL] + budget[Stage.DECODE]) / c.inference_slots,
    }


def offered_load(scenario: Scenario, transport: Transport) -> dict[str, float]:
    """Offered load per pool under open arrivals (>= 1 means the queue grows forever)."""
    demand = pool_demand_s(scenario, expect(scenario, transport))
    return {pool: scenario.load.rollouts_per_s * s for pool, s in demand.items()}


def fleet_summary(
    spec_text: str, scenario: Scenario, transport: Transport, replications: list[Replication]
) -> dict[str, Any]:
    """The JSON object of one load point (keys shared with ``run --json``)."""
    load = scenario.load
    head = {
        "spec": spec_text,
        "scenario": scenario.name,
        "transport": transport.value,
        "engine": "des-fleet",
        "seed": scenario.seed,
        "load": {
            "kind": load.kind,
            "agents": load.agents if load.kind == "closed" else None,
            "rollouts_per_s": load.rollouts_per_s if load.kind == "open" else None,
            "warmup_s": load.warmup_s,
            "duration_s": load.duration_s,
        },
        "replications": len(replications),
        "ci_method": CI_METHOD,
    }
    stability = _stability(scenario, transport, replications)
    head.update(stability)
    pooled = concatenate([r.records for r in replications])
    head["rollouts"] = pooled.count
    if not stability["stable"] or pooled.count == 0:
        return {**head, Metric.E2E_S.value: None, Metric.TTFT_S.value: None}
    budget = pooled.stage_s.mean(axis=0)
    total = float(budget.sum())
    per_rep = [r.records for r in replications]
    return {
        **head,
        Metric.E2E_S.value: _latency(pooled.e2e_s, [r.e2e_s.mean() for r in per_rep]),
        Metric.TTFT_S.value: _latency(
            pooled.turn_ttft_s, [r.ttft_sum_s.sum() / r.turns.sum() for r in per_rep]
        ),
        Metric.BUDGET_S.value: {s.value: float(v) for s, v in zip(STAGES, budget, strict=True)},
        Metric.BUDGET_SHARE.value: {
            s.value: float(v) / total for s, v in zip(STAGES, budget, strict=True)
        },
        Metric.API_CPU_S_PER_ROLLOUT.value: float(pooled.api_cpu_s.mean()),
        Metric.SAFETY_CPU_S_PER_ROLLOUT.value: float(pooled.safety_cpu_s.mean()),
        Metric.TURNS_PER_ROLLOUT.value: float(pooled.turns.mean()),
        Metric.RECONNECTS_PER_ROLLOUT.value: float(pooled.cold_turns.mean()),
        "throughput": {
            "turns_per_s": _mean_ci([r.turns_completed / r.window_s for r in replications]),
            "output_tokens_per_s": _mean_ci(
                [r.output_tokens_completed / r.window_s for r in replications]
            ),
            "rollouts_per_s": _mean_ci([r.rollouts_started / r.window_s for r in replications]),
        },
        "utilization": {
            pool: _mean_ci([r.pools[pool].utilization for r in replications]) for pool in POOLS
        },
        "mean_queue_length": {
            pool: float(np.mean([r.pools[pool].mean_waiting for r in replications]))
            for pool in POOLS
        },
        "wait_s_per_turn": {
            pool: sum(r.wait_s_by_pool[pool] for r in replications) / pooled.turns.sum()
            for pool in POOLS
        },
        "mean_rollouts_in_system": float(np.mean([r.mean_in_system for r in replications])),
    }


def fleet_reductions(a: list[Replication], b: list[Replication]) -> dict[str, Any]:
    """Reductions of b relative to a, paired by replication (same seeds), t-interval."""
    out: dict[str, Any] = {}
    measures = {
        Metric.E2E_REDUCTION: lambda r: r.records.e2e_s.mean(),
        Metric.TTFT_REDUCTION: lambda r: r.records.ttft_sum_s.sum() / r.records.turns.sum(),
        Metric.API_CPU_REDUCTION: lambda r: r.records.api_cpu_s.mean(),
    }
    for metric, measure in measures.items():
        ratios = [1.0 - measure(rb) / measure(ra) for ra, rb in zip(a, b, strict=True)]
        summary = _mean_ci(ratios)
        out[metric.value] = summary["mean"]
        out[f"{metric.value}_ci95"] = summary["ci95"]
    return out


def _stability(
    scenario: Scenario, transport: Transport, replications: list[Replication]
) -> dict[str, Any]:
    if scenario.load.kind == "closed":
        return {"stable": True, "offered_load": None, "unstable_reason": None}
    offered = offered_load(scenario, transport)
    worst = max(offered, key=offered.get)
    stable = bool(offered[worst] < 1.0)
    reason = None
    backlog = float(np.mean([r.mean_in_system for r in replications]))
    at_end = float(np.mean([r.in_system_at_end for r in replications]))
    if not stable:
        reason = (
            f"offered load on the {worst} pool is {offered[worst]:.2f}x its capacity: "
            f"the queue grows without bound (rollouts in system: {backlog:.0f} on average over "
            f"the window, {at_end:.0f} at its end; means are not reported)"
        )
    return {"stable": stable, "offered_load": offered, "unstable_reason": reason}


def _latency(pooled: np.ndarray, replication_means: list[float]) -> dict[str, Any]:
    p50, p95, p99 = np.percentile(pooled, [50, 95, 99])
    mean_ci = _mean_ci(replication_means)
    return {
        "mean": float(pooled.mean()),
        "p50": float(p50),
        "p95": float(p95),
        "p99": float(p99),
        "ci95": mean_ci["ci95"],
    }


def _mean_ci(values: list[float]) -> dict[str, Any]:
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if array.size < 2:
        return {"mean": mean, "ci95": None}
    half = float(stdtrit(array.size - 1, 0.975) * array.std(ddof=1) / np.sqrt(array.size))
    return {"mean": mean, "ci95": [mean - half, mean + half]}
