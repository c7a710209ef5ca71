"""Metric names: the single vocabulary of JSON keys, table rows, Parquet columns and labels."""

from __future__ import annotations

from enum import StrEnum


class Metric(StrEnum):
    """A key of a result, named with its unit where it has one."""

    SPEC = "spec"
    SCENARIO = "scenario"
    SCENARIO_HASH = "scenario_hash"
    OVERRIDES = "overrides"
    TRANSPORT = "transport"
    ENGINE = "engine"
    SEED = "seed"
    ROLLOUTS = "rollouts"
    APPROXIMATIONS = "approximations"
    E2E_S = "e2e_s"
    TTFT_S = "ttft_s"
    BUDGET_S = "budget_s"
    BUDGET_SHARE = "budget_share"
    API_CPU_S_PER_ROLLOUT = "api_cpu_s_per_rollout"
    SAFETY_CPU_S_PER_ROLLOUT = "safety_cpu_s_per_rollout"
    TURNS_PER_ROLLOUT = "turns_per_rollout"
    RECONNECTS_PER_ROLLOUT = "reconnects_per_rollout"
    PREFIX_CACHE_HIT_RATE = "prefix_cache_hit_rate"
    E2E_REDUCTION = "e2e_reduction"
    E2E_REDUCTION_CI95 = "e2e_reduction_ci95"
    TTFT_REDUCTION = "ttft_reduction"
    TTFT_REDUCTION_CI95 = "ttft_reduction_ci95"
    API_CPU_REDUCTION = "api_cpu_reduction"
    API_CPU_REDUCTION_CI95 = "api_cpu_reduction_ci95"
    # A fleet's load point and what it measured.
    LOAD = "load"
    REPLICATIONS = "replications"
    CI_METHOD = "ci_method"
    STABLE = "stable"
    OFFERED_LOAD = "offered_load"
    UNSTABLE_REASON = "unstable_reason"
    THROUGHPUT = "throughput"
    TURNS_PER_S = "turns_per_s"
    OUTPUT_TOKENS_PER_S = "output_tokens_per_s"
    ROLLOUTS_PER_S = "rollouts_per_s"
    UTILIZATION = "utilization"
    MEAN_QUEUE_LENGTH = "mean_queue_length"
    WAIT_S_PER_TURN = "wait_s_per_turn"
    MEAN_ROLLOUTS_IN_SYSTEM = "mean_rollouts_in_system"
    WARMUP_CUT_S = "warmup_cut_s"
    STEADY_STATE_REACHED = "steady_state_reached"
    RATE_LIMIT = "rate_limit"
    ADMITTED_REQUESTS_PER_MIN = "admitted_requests_per_min_per_organization"
    REFUSED_PER_REQUEST = "refused_per_request"
    REFUSED_S_PER_TURN = "refused_s_per_turn"
    # A capacity search.
    PROBES = "probes"

    @property
    def label(self) -> str:
        return _LABELS.get(self, self.value.replace("_", " "))

    @property
    def ci95(self) -> Metric:
        """The key of this reduction's 95% confidence interval."""
        return Metric(f"{self.value}_ci95")


class Statistic(StrEnum):
    """A statistic of a latency distribution."""

    MEAN = "mean"
    P50 = "p50"
    P95 = "p95"
    P99 = "p99"
    CI95 = "ci95"

    @property
    def percentile(self) -> float | None:
        """The percentile this statistic is (None for the mean and the interval)."""
        return float(self.value[1:]) if self.value.startswith("p") else None


REDUCTIONS: tuple[Metric, ...] = (
    Metric.E2E_REDUCTION,
    Metric.TTFT_REDUCTION,
    Metric.API_CPU_REDUCTION,
)
"""The reductions a comparison reports, each with its 95% CI."""

_LABELS = {
    Metric.SCENARIO_HASH: "hash of the resolved scenario, seed aside",
    Metric.OVERRIDES: "the --set overrides applied to the scenario",
    Metric.E2E_S: "end-to-end time per rollout (s)",
    Metric.TTFT_S: "time to first token per turn (s)",
    Metric.BUDGET_S: "seconds per rollout on the critical path",
    Metric.BUDGET_SHARE: "share of end-to-end time",
    Metric.API_CPU_S_PER_ROLLOUT: "API work per rollout, overlapped included (s)",
    Metric.SAFETY_CPU_S_PER_ROLLOUT: "safety-classifier work per rollout (s)",
    Metric.TURNS_PER_ROLLOUT: "requests per rollout",
    Metric.RECONNECTS_PER_ROLLOUT: "new connections per rollout",
    Metric.PREFIX_CACHE_HIT_RATE: "prompt tokens whose KV was reused, over prompt tokens",
    Metric.E2E_REDUCTION: "end-to-end reduction",
    Metric.E2E_REDUCTION_CI95: "end-to-end reduction, 95% CI",
    Metric.TTFT_REDUCTION: "TTFT reduction",
    Metric.TTFT_REDUCTION_CI95: "TTFT reduction, 95% CI",
    Metric.API_CPU_REDUCTION: "API work reduction",
    Metric.API_CPU_REDUCTION_CI95: "API work reduction, 95% CI",
    Metric.TURNS_PER_S: "turns completed per second",
    Metric.OUTPUT_TOKENS_PER_S: "output tokens per second",
    Metric.ROLLOUTS_PER_S: "rollouts started per second",
    Metric.UTILIZATION: "time-average busy share of each pool",
    Metric.MEAN_QUEUE_LENGTH: "time-average requests waiting per pool",
    Metric.WAIT_S_PER_TURN: "seconds waited per turn per pool",
    Metric.MEAN_ROLLOUTS_IN_SYSTEM: "time-average rollouts in flight",
    Metric.WARMUP_CUT_S: "simulated time from which the run is measured (MSER-5 cut)",
    Metric.STEADY_STATE_REACHED: "every replication settled before its series ended",
    Metric.RATE_LIMIT: "what the organizations' rate limits did (fleet with a limit)",
    Metric.ADMITTED_REQUESTS_PER_MIN: "requests admitted per minute per organization",
    Metric.REFUSED_PER_REQUEST: "429 answers per admitted request",
    Metric.REFUSED_S_PER_TURN: "seconds per turn spent refused (in the retry stage)",
    Metric.PROBES: "load points the capacity search simulated",
}
