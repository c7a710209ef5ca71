"""What a fleet load point adds to a run's result: the load, throughput, pools, stability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.stages import POOLS, Pool
from sim.analysis.metrics import Metric, Statistic

Interval = tuple[float, float]


@dataclass(frozen=True)
class LoadPoint:
    """Who loads the fleet: a closed population of agents or open arrivals, and the window."""

    kind: str
    agents: int | None
    rollouts_per_s: float | None
    warmup_s: float
    duration_s: float

    @property
    def label(self) -> str:
        """As the command line gives it: ``1,000 agents`` or ``0.5 rollouts/s``."""
        if self.kind == "closed":
            return f"{self.agents:,} agents"
        return f"{self.rollouts_per_s:g} rollouts/s"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "agents": self.agents,
            "rollouts_per_s": self.rollouts_per_s,
            "warmup_s": self.warmup_s,
            "duration_s": self.duration_s,
        }


@dataclass(frozen=True)
class MeanCi:
    """A mean across replications with its Student-t 95% interval (None with one replication)."""

    mean: float
    ci95: Interval | None

    def to_json(self) -> dict[str, Any]:
        ci = None if self.ci95 is None else [self.ci95[0], self.ci95[1]]
        return {Statistic.MEAN.value: self.mean, Statistic.CI95.value: ci}


@dataclass(frozen=True)
class RateLimited:
    """What the organizations' rate limits did at one load point."""

    admitted_requests_per_min: MeanCi
    """Requests admitted per minute per organization."""
    refused_per_request: float
    """429 answers per admitted request."""
    refused_s_per_turn: float
    """Seconds per turn spent refused: the 429s' round trips and retry-afters."""

    def to_json(self) -> dict[str, Any]:
        return {
            Metric.ADMITTED_REQUESTS_PER_MIN.value: self.admitted_requests_per_min.to_json(),
            Metric.REFUSED_PER_REQUEST.value: self.refused_per_request,
            Metric.REFUSED_S_PER_TURN.value: self.refused_s_per_turn,
        }


@dataclass(frozen=True)
class FleetHead:
    """A fleet load point: how it was loaded and whether it is stable."""

    load: LoadPoint
    replications: int
    ci_method: str
    stable: bool
    offered_load: dict[Pool, float] | None
    unstable_reason: str | None
    warmup_cut_s: float | None = None
    """Simulated time from which the replications are measured (the latest of their
    MSER-5 cuts, never before ``load.warmup_s``); None for the analytic engine."""
    steady_state_reached: bool = True
    """False when some replication's series never settled: the run is too short."""

    def head_json(self) -> dict[str, Any]:
        offered = None
        if self.offered_load is not None:
            offered = {pool.value: value for pool, value in self.offered_load.items()}
        return {
            Metric.LOAD.value: self.load.to_json(),
            Metric.REPLICATIONS.value: self.replications,
            Metric.CI_METHOD.value: self.ci_method,
            Metric.STABLE.value: self.stable,
            Metric.OFFERED_LOAD.value: offered,
            Metric.UNSTABLE_REASON.value: self.unstable_reason,
            Metric.WARMUP_CUT_S.value: self.warmup_cut_s,
            Metric.STEADY_STATE_REACHED.value: self.steady_state_reached,
        }


@dataclass(frozen=True, kw_only=True)
class FleetStats(FleetHead):
    """A measured fleet load point: its head and what the pools did."""

    throughput: dict[Metric, MeanCi]
    """Turns, output tokens and rollouts per second (``Metric.TURNS_PER_S``, ...)."""
    utilization: dict[Pool, MeanCi]
    mean_queue_length: dict[Pool, float]
    wait_s_per_turn: dict[Pool, float]
    mean_rollouts_in_system: float
    rate_limit: RateLimited | None
    """None without a rate limit."""

    def body_json(self) -> dict[str, Any]:
        return {
            Metric.THROUGHPUT.value: {k.value: v.to_json() for k, v in self.throughput.items()},
            Metric.UTILIZATION.value: {p.value: self.utilization[p].to_json() for p in POOLS},
            Metric.MEAN_QUEUE_LENGTH.value: {p.value: self.mean_queue_length[p] for p in POOLS},
            Metric.WAIT_S_PER_TURN.value: {p.value: self.wait_s_per_turn[p] for p in POOLS},
            Metric.MEAN_ROLLOUTS_IN_SYSTEM.value: self.mean_rollouts_in_system,
            Metric.RATE_LIMIT.value: None if self.rate_limit is None else self.rate_limit.to_json(),
        }
