"""One load point of the analytic fleet: per rollout and per pool."""

from __future__ import annotations

from dataclasses import dataclass

from models.stages import Pool


@dataclass(frozen=True)
class FleetPoint:
    """The analytic fleet at one load: per rollout and per pool."""

    agents: int | None
    rollouts_per_s: float
    e2e_s: float
    ttft_s: float
    """Mean TTFT per turn."""
    utilization: dict[Pool, float]
    queue_length: dict[Pool, float]
    """Mean requests waiting (not in service) at each pool."""
    residence_s: dict[Pool, float]
    """Seconds per rollout at each pool: its demand plus every wait for it."""
    path_wait_s: dict[Pool, float]
    """Seconds per rollout the critical path waits for each pool (the queue stage)."""
    wait_probability: dict[Pool, float]
    """Probability that a request finds every server of the pool busy."""
    decode_s: float
    """Decode seconds per rollout, stretched by the batch."""
    stable: bool = True
    rate_limit_wait_s: float = 0.0
    """Seconds per rollout spent refused by the rate limits (in the retry stage)."""
    refused_per_request: float = 0.0
    """429 answers per admitted request."""

    @property
    def in_system(self) -> float:
        return self.rollouts_per_s * self.e2e_s
