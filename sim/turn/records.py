"""Results as plain arrays: one row per rollout, plus per-turn rows when kept.

Summaries are computed from these; reporting only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.stages import POOLS, STAGES, Side


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
    safety_parallel_s: np.ndarray
    """Work of the classifiers run alongside prefill, seconds."""
    wait_s: np.ndarray
    """Shape (turns, len(sim.turn.phases.WAIT_PHASES)): seconds waited for each pool."""
    cached_prompt_tokens: np.ndarray
    """Prompt tokens whose KV the replica reused."""
    uncached_prompt_tokens: np.ndarray
    """Prompt tokens prefilled (the rest of the prompt)."""
    rate_limited: np.ndarray
    """429 answers the turn's request met before the rate limit admitted it."""
    output_tokens: np.ndarray
    """Output tokens of the turn's response."""
    tool_kind: np.ndarray
    """Index in ``workload.tools`` of the (first) tool the turn called, -1 on the last turn."""

    def side_s(self, side: Side) -> np.ndarray:
        """Seconds each turn's side holding kept its pool's server."""
        if side is Side.PARALLEL_SAFETY:
            return self.safety_parallel_s
        return self.post_overlapped_s


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
    started_at_s: np.ndarray
    """Simulated time the rollout started (in its block's environment for one agent)."""
    pool_wait_s: np.ndarray
    """Shape (rollouts, len(POOLS)): seconds the rollout's turns waited for each pool."""
    turn_ttft_s: np.ndarray
    cached_prompt_tokens: np.ndarray
    """Prompt tokens of the rollout's turns whose KV was reused."""
    uncached_prompt_tokens: np.ndarray
    """Prompt tokens of the rollout's turns that were prefilled."""
    rate_limited: np.ndarray
    """429 answers the rollout's requests met (fleet rate limit)."""
    rate_limit_wait_s: np.ndarray
    """Seconds of the retry stage its requests spent refused by the rate limit."""
    turn_records: TurnRecords | None = None

    @property
    def prefix_cache_hit_rate(self) -> float:
        """Cached prompt tokens over prompt tokens (the token-weighted rate vLLM reports)."""
        cached = float(self.cached_prompt_tokens.sum())
        total = cached + float(self.uncached_prompt_tokens.sum())
        return cached / total if total > 0 else float("nan")

    @property
    def count(self) -> int:
        return int(self.e2e_s.size)


def concatenate(parts: list[RolloutRecords]) -> RolloutRecords:
    """Join the records of consecutive blocks (none: a run that measured no rollout)."""
    if not parts:
        return _empty()
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


def _empty() -> RolloutRecords:
    columns = {"stage_s": len(STAGES), "pool_wait_s": len(POOLS)}
    return RolloutRecords(
        **{
            name: np.zeros((0, columns[name]) if name in columns else 0)
            for name in RolloutRecords.__dataclass_fields__
            if name != "turn_records"
        },
        turn_records=None,
    )


def select(records: RolloutRecords, keep: np.ndarray) -> RolloutRecords:
    """The rollouts where ``keep`` (per-turn TTFTs follow; per-turn rows are kept whole)."""
    per_turn = np.repeat(keep, records.turns.astype(np.int64))
    chosen = {
        name: getattr(records, name)[keep]
        for name in RolloutRecords.__dataclass_fields__
        if name not in ("turn_ttft_s", "turn_records")
    }
    return RolloutRecords(
        **chosen, turn_ttft_s=records.turn_ttft_s[per_turn], turn_records=records.turn_records
    )
