"""Results as plain arrays: one row per rollout, plus per-turn rows when kept.

Summaries are computed from these; reporting only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.stages import STAGES


@dataclass(frozen=True)
class TurnRecords:
    """One row per turn: when it started, which rollout, and each stage's seconds."""

    rollout: np.ndarray
    turn_index: np.ndarray
    start_at_s: np.ndarray
    cold: np.ndarray
    stage_s: np.ndarray
    """Shape (turns, len(STAGES)), columns in ``STAGES`` order."""
    ttft_s: np.ndarray
    api_cpu_s: np.ndarray
    post_overlapped_s: np.ndarray
    """Post-inference work done off the critical path (WebSocket), seconds."""
    wait_s: np.ndarray
    """Shape (turns, len(sim.engine.plan.WAIT_PHASES)): seconds waited for each pool."""


@dataclass(frozen=True)
class RolloutRecords:
    """One row per rollout (and the per-turn TTFTs needed for percentiles)."""

    e2e_s: np.ndarray
    turns: np.ndarray
    cold_turns: np.ndarray
    stage_s: np.ndarray
    """Shape (rollouts, len(STAGES)): seconds per stage on the critical path."""
    ttft_sum_s: np.ndarray
    api_cpu_s: np.ndarray
    safety_cpu_s: np.ndarray
    turn_ttft_s: np.ndarray
    turn_records: TurnRecords | None = None

    @property
    def count(self) -> int:
        return int(self.e2e_s.size)


def concatenate(parts: list[RolloutRecords]) -> RolloutRecords:
    """Join the records of consecutive blocks (no blocks: no rows)."""
    if not parts:
        return _no_rollouts()
    keep = all(p.turn_records is not None for p in parts)
    turn_records = None
    if keep:
        turn_records = TurnRecords(
            **{
                name: np.concatenate([getattr(p.turn_records, name) for p in parts])
                for name in TurnRecords.__dataclass_fields__
            }
        )
    joined = {
        name: np.concatenate([getattr(p, name) for p in parts])
        for name in RolloutRecords.__dataclass_fields__
        if name != "turn_records"
    }
    return RolloutRecords(**joined, turn_records=turn_records)


def _no_rollouts() -> RolloutRecords:
    """Records without a row: no rollout started (e.g. in a fleet's measured window)."""
    empty = np.empty(0)
    return RolloutRecords(
        e2e_s=empty,
        turns=empty,
        cold_turns=empty,
        stage_s=np.empty((0, len(STAGES))),
        ttft_sum_s=empty,
        api_cpu_s=empty,
        safety_cpu_s=empty,
        turn_ttft_s=empty,
    )
