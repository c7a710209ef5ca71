"""Metric names: the single vocabulary of JSON keys, table rows and plot labels."""

from __future__ import annotations

from enum import StrEnum


class Metric(StrEnum):
    """A summary metric of a run, named with its unit."""

    E2E_S = "e2e_s"
    TTFT_S = "ttft_s"
    BUDGET_S = "budget_s"
    BUDGET_SHARE = "budget_share"
    API_CPU_S_PER_ROLLOUT = "api_cpu_s_per_rollout"
    SAFETY_CPU_S_PER_ROLLOUT = "safety_cpu_s_per_rollout"
    TURNS_PER_ROLLOUT = "turns_per_rollout"
    RECONNECTS_PER_ROLLOUT = "reconnects_per_rollout"
    E2E_REDUCTION = "e2e_reduction"
    E2E_REDUCTION_CI95 = "e2e_reduction_ci95"
    TTFT_REDUCTION = "ttft_reduction"
    TTFT_REDUCTION_CI95 = "ttft_reduction_ci95"
    API_CPU_REDUCTION = "api_cpu_reduction"
    API_CPU_REDUCTION_CI95 = "api_cpu_reduction_ci95"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Metric.E2E_S: "end-to-end time per rollout (s)",
    Metric.TTFT_S: "time to first token per turn (s)",
    Metric.BUDGET_S: "seconds per rollout on the critical path",
    Metric.BUDGET_SHARE: "share of end-to-end time",
    Metric.API_CPU_S_PER_ROLLOUT: "API work per rollout, overlapped included (s)",
    Metric.SAFETY_CPU_S_PER_ROLLOUT: "safety-classifier work per rollout (s)",
    Metric.TURNS_PER_ROLLOUT: "requests per rollout",
    Metric.RECONNECTS_PER_ROLLOUT: "new connections per rollout",
    Metric.E2E_REDUCTION: "end-to-end reduction",
    Metric.E2E_REDUCTION_CI95: "end-to-end reduction, 95% CI",
    Metric.TTFT_REDUCTION: "TTFT reduction",
    Metric.TTFT_REDUCTION_CI95: "TTFT reduction, 95% CI",
    Metric.API_CPU_REDUCTION: "API work reduction",
    Metric.API_CPU_REDUCTION_CI95: "API work reduction, 95% CI",
}
