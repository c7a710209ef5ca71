"""Summaries computed from records or expectations: the typed results of ``run`` and ``compare``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from models.errors import ScenarioError
from models.scenario_hash import scenario_hash
from models.stages import STAGES, Stage
from sim.analysis.metrics import Metric
from sim.analysis.results import Comparison, Estimate, Latency, RunResult, UnmeasuredPoint
from sim.analysis.run import AnalyticRun, FleetRun, Run, SimulatedRun
from sim.analysis.stats import mean_ci95, ratio_ci95, reduction


def summarize(run: Run) -> RunResult[Any] | UnmeasuredPoint:
    """The result of one run: latency statistics, the budget per stage, API work, and the
    overrides the run's scenario was loaded with."""
    if isinstance(run, FleetRun):
        from sim.analysis.fleet_summary import fleet_result

        result = fleet_result(run.spec.text, run.scenario, run.spec.transport, run.replications)
        return replace(result, overrides=run.overrides)
    return agent_result(run)


def agent_result(run: SimulatedRun | AnalyticRun) -> RunResult[None]:
    """The result of one agent's run, simulated or analytic."""
    head: dict[str, Any] = {
        "spec": run.spec.text,
        "scenario": run.scenario.name,
        "transport": run.spec.transport,
        "engine": run.engine.value,
        "scenario_hash": scenario_hash(run.scenario),
        "overrides": run.overrides,
        "fleet": None,
    }
    if isinstance(run, SimulatedRun):
        r = run.records
        return RunResult(
            **head,
            seed=run.scenario.seed,
            rollouts=run.rollouts,
            e2e_s=_distribution(r.e2e_s, mean_ci95(r.e2e_s)),
            ttft_s=_distribution(r.turn_ttft_s, ratio_ci95(r.ttft_sum_s, r.turns)),
            budget_s=_budget(r.stage_s.mean(axis=0)),
            api_cpu_s_per_rollout=float(r.api_cpu_s.mean()),
            safety_cpu_s_per_rollout=float(r.safety_cpu_s.mean()),
            turns_per_rollout=float(r.turns.mean()),
            reconnects_per_rollout=float(r.cold_turns.mean()),
            prefix_cache_hit_rate=r.prefix_cache_hit_rate,
        )
    e = run.expectation
    return RunResult(
        **head,
        seed=None,
        rollouts=None,
        e2e_s=Latency(float(e.e2e_s)),
        ttft_s=Latency(float(e.ttft_mean_s)),
        budget_s=_budget(e.stage_s),
        api_cpu_s_per_rollout=float(e.api_cpu_s),
        safety_cpu_s_per_rollout=float(e.safety_cpu_s),
        turns_per_rollout=float(e.turns),
        reconnects_per_rollout=float(e.cold_turns),
        prefix_cache_hit_rate=e.prefix_cache_hit_rate,
        approximations=tuple(str(a) for a in e.approximations),
    )


def compare(a: Run, b: Run) -> Comparison:
    """Both runs and the reductions of b relative to a (paired where both were simulated)."""
    if isinstance(a, FleetRun) and isinstance(b, FleetRun):
        from sim.analysis.fleet_summary import fleet_reductions

        result_a, result_b = summarize(a), summarize(b)
        stable = result_a.stable and result_b.stable
        reductions = fleet_reductions(a.replications, b.replications) if stable else {}
        return Comparison(result_a, result_b, reductions)
    if isinstance(a, FleetRun) or isinstance(b, FleetRun):
        fleet, agent = (a, b) if isinstance(a, FleetRun) else (b, a)
        raise ScenarioError(
            f"compare: {fleet.spec.text} runs on the fleet engine and {agent.spec.text} as one "
            "agent; compare two fleets or two single agents"
        )
    agent_a, agent_b = agent_result(a), agent_result(b)
    if isinstance(a, SimulatedRun) and isinstance(b, SimulatedRun):
        ra, rb = a.records, b.records
        ones_a, ones_b = np.ones(ra.count), np.ones(rb.count)
        pairs = {
            Metric.E2E_REDUCTION: (ra.e2e_s, ones_a, rb.e2e_s, ones_b),
            Metric.TTFT_REDUCTION: (ra.ttft_sum_s, ra.turns, rb.ttft_sum_s, rb.turns),
            Metric.API_CPU_REDUCTION: (ra.api_cpu_s, ones_a, rb.api_cpu_s, ones_b),
        }
        reductions = {metric: Estimate(*reduction(*arrays)) for metric, arrays in pairs.items()}
        return Comparison(agent_a, agent_b, reductions)
    means = {
        Metric.E2E_REDUCTION: (agent_a.e2e_s.mean, agent_b.e2e_s.mean),
        Metric.TTFT_REDUCTION: (agent_a.ttft_s.mean, agent_b.ttft_s.mean),
        Metric.API_CPU_REDUCTION: (agent_a.api_cpu_s_per_rollout, agent_b.api_cpu_s_per_rollout),
    }
    return Comparison(
        agent_a,
        agent_b,
        {metric: Estimate(1.0 - after / before) for metric, (before, after) in means.items()},
    )


def _budget(per_stage_s: np.ndarray) -> dict[Stage, float]:
    return {stage: float(s) for stage, s in zip(STAGES, per_stage_s, strict=True)}


def _distribution(values: np.ndarray, ci: tuple[float, float]) -> Latency:
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return Latency(
        float(values.mean()), float(p50), float(p95), float(p99), (float(ci[0]), float(ci[1]))
    )
