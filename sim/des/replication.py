"""What one fleet replication measured, and the same measurement from a later start.

The engine snapshots every time-weighted level and every counter at equally
spaced checkpoints of the measured window, so a warm-up detected after the run
(``sim.analysis.warmup``) can be cut from the levels and the throughput as well
as from the rollouts, without simulating again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from models.stages import POOLS, Pool
from sim.turn.records import RolloutRecords, select

CHECKPOINTS = 60
"""Equal parts of the measured window; a detected warm-up is cut at one of their edges."""


@dataclass(frozen=True)
class PoolStats:
    """Time-weighted statistics of one pool over the measured window."""

    capacity: int
    utilization: float
    mean_busy: float
    mean_waiting: float


@dataclass(frozen=True)
class Checkpoints:
    """Cumulative values at ``times_s``: level integrals (server-seconds) and counts."""

    times_s: np.ndarray
    busy_s: dict[Pool, np.ndarray]
    """Busy servers integrated over time (server-seconds)."""
    waiting_s: dict[Pool, np.ndarray]
    """Waiting requests integrated over time (request-seconds)."""
    in_system_s: np.ndarray
    """Rollouts in the system integrated over time (rollout-seconds)."""
    turns_completed: np.ndarray
    output_tokens_completed: np.ndarray
    rollouts_started: np.ndarray
    requests_admitted: np.ndarray
    """Requests the rate limit admitted (all organizations; 0 without a limit)."""
    requests_refused: np.ndarray
    """429 answers of the rate limit."""


@dataclass(frozen=True)
class Replication:
    """What one fleet replication measured: rollouts that started inside the window."""

    records: RolloutRecords
    pools: dict[Pool, PoolStats]
    window_s: float
    turns_completed: int
    output_tokens_completed: float
    rollouts_started: int
    requests_admitted: int
    requests_refused: int
    mean_in_system: float
    in_system_at_end: int
    checkpoints: Checkpoints

    @property
    def window_start_s(self) -> float:
        return float(self.checkpoints.times_s[0])

    @property
    def wait_s_by_pool(self) -> dict[Pool, float]:
        """Total wait per pool over the measured rollouts' turns."""
        waits = self.records.pool_wait_s
        return {pool: float(waits[:, i].sum()) for i, pool in enumerate(POOLS)}

    def since(self, cut_s: float) -> Replication:
        """The measurement restricted to the part of the window from the first checkpoint
        at or after ``cut_s``: rollouts started from then, levels and counts from then."""
        c = self.checkpoints
        k = min(int(np.searchsorted(c.times_s, cut_s - 1e-9)), c.times_s.size - 2)
        if k <= 0:
            return self
        kept = Checkpoints(
            times_s=c.times_s[k:],
            busy_s={pool: area[k:] for pool, area in c.busy_s.items()},
            waiting_s={pool: area[k:] for pool, area in c.waiting_s.items()},
            in_system_s=c.in_system_s[k:],
            turns_completed=c.turns_completed[k:],
            output_tokens_completed=c.output_tokens_completed[k:],
            rollouts_started=c.rollouts_started[k:],
            requests_admitted=c.requests_admitted[k:],
            requests_refused=c.requests_refused[k:],
        )
        span_s = float(kept.times_s[-1] - kept.times_s[0])

        def mean(cumulative: np.ndarray) -> float:
            return float(cumulative[-1] - cumulative[0]) / span_s

        def count(cumulative: np.ndarray) -> float:
            return float(cumulative[-1] - cumulative[0])

        pools = {
            pool: replace(
                stats,
                utilization=mean(kept.busy_s[pool]) / stats.capacity,
                mean_busy=mean(kept.busy_s[pool]),
                mean_waiting=mean(kept.waiting_s[pool]),
            )
            for pool, stats in self.pools.items()
        }
        return replace(
            self,
            records=select(self.records, self.records.started_at_s >= kept.times_s[0]),
            pools=pools,
            window_s=span_s,
            turns_completed=int(count(kept.turns_completed)),
            output_tokens_completed=count(kept.output_tokens_completed),
            rollouts_started=int(count(kept.rollouts_started)),
            requests_admitted=int(count(kept.requests_admitted)),
            requests_refused=int(count(kept.requests_refused)),
            mean_in_system=mean(kept.in_system_s),
            checkpoints=kept,
        )
