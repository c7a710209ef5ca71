"""Summaries computed from records: the JSON objects of ``run`` and ``compare``."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.stages import STAGES
from sim.analysis.fleet_summary import fleet_reductions, fleet_summary
from sim.analysis.metrics import Metric
from sim.analysis.run import Run
from sim.analysis.stats import mean_ci95, ratio_ci95, reduction


def summarize(run: Run) -> dict[str, Any]:
    """The ``run`` JSON object: latency statistics, the budget per stage, API work."""
    if run.fleet is not None:
        return fleet_summary(run.spec.text, run.scenario, run.spec.transport, run.fleet)
    head = {
        "spec": run.spec.text,
        "scenario": run.scenario.name,
        "transport": run.spec.transport.value,
        "engine": run.engine.value,
        "seed": run.scenario.seed,
        "rollouts": run.rollouts,
    }
    if run.records is not None:
        r = run.records
        budget = r.stage_s.mean(axis=0)
        body = {
            Metric.E2E_S: _distribution(r.e2e_s, mean_ci95(r.e2e_s)),
            Metric.TTFT_S: _distribution(r.turn_ttft_s, ratio_ci95(r.ttft_sum_s, r.turns)),
            Metric.API_CPU_S_PER_ROLLOUT: float(r.api_cpu_s.mean()),
            Metric.SAFETY_CPU_S_PER_ROLLOUT: float(r.safety_cpu_s.mean()),
            Metric.TURNS_PER_ROLLOUT: float(r.turns.mean()),
            Metric.RECONNECTS_PER_ROLLOUT: float(r.cold_turns.mean()),
        }
    else:
        e = run.expectation
        budget = e.stage_s
        body = {
            Metric.E2E_S: _expected(e.e2e_s),
            Metric.TTFT_S: _expected(e.ttft_mean_s),
            Metric.API_CPU_S_PER_ROLLOUT: e.api_cpu_s,
            Metric.SAFETY_CPU_S_PER_ROLLOUT: e.safety_cpu_s,
            Metric.TURNS_PER_ROLLOUT: e.turns,
            Metric.RECONNECTS_PER_ROLLOUT: e.cold_turns,
        }
    total = float(budget.sum())
    body[Metric.BUDGET_S] = {stage.value: float(s) for stage, s in zip(STAGES, budget, strict=True)}
    body[Metric.BUDGET_SHARE] = {
        stage.value: float(s) / total for stage, s in zip(STAGES, budget, strict=True)
    }
    return {**head, **{str(key): value for key, value in body.items()}}


def compare(a: Run, b: Run) -> dict[str, Any]:
    """The ``compare`` JSON object: both runs and the reductions of b relative to a."""
    out: dict[str, Any] = {"a": summarize(a), "b": summarize(b)}
    if a.fleet is not None and b.fleet is not None:
        if out["a"]["stable"] and out["b"]["stable"]:
            out.update(fleet_reductions(a.fleet, b.fleet))
    elif a.records is not None and b.records is not None:
        ra, rb = a.records, b.records
        ones_a, ones_b = np.ones(ra.count), np.ones(rb.count)
        pairs = {
            Metric.E2E_REDUCTION: (ra.e2e_s, ones_a, rb.e2e_s, ones_b),
            Metric.TTFT_REDUCTION: (ra.ttft_sum_s, ra.turns, rb.ttft_sum_s, rb.turns),
            Metric.API_CPU_REDUCTION: (ra.api_cpu_s, ones_a, rb.api_cpu_s, ones_b),
        }
        for metric, (a_num, a_den, b_num, b_den) in pairs.items():
            value, ci = reduction(a_num, a_den, b_num, b_den)
            out[metric.value] = value
            out[f"{metric.value}_ci95"] = list(ci)
    else:
        ea, eb = out["a"], out["b"]
        for metric, key in (
            (Metric.E2E_REDUCTION, Metric.E2E_S),
            (Metric.TTFT_REDUCTION, Metric.TTFT_S),
        ):
            out[metric.value] = 1.0 - eb[key]["mean"] / ea[key]["mean"]
            out[f"{metric.value}_ci95"] = None
        api = Metric.API_CPU_S_PER_ROLLOUT
        out[Metric.API_CPU_REDUCTION.value] = 1.0 - eb[api] / ea[api]
        out[Metric.API_CPU_REDUCTION_CI95.value] = None
    return out


def _distribution(values: np.ndarray, ci: tuple[float, float]) -> dict[str, Any]:
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {
        "mean": float(values.mean()),
        "p50": float(p50),
        "p95": float(p95),
        "p99": float(p99),
        "ci95": [float(ci[0]), float(ci[1])],
    }


def _expected(mean: float) -> dict[str, Any]:
    """The analytic engine gives means only: percentiles and CIs are null."""
    return {"mean": float(mean), "p50": None, "p95": None, "p99": None, "ci95": None}
