"""What the analytic engine's per-rollout sums become: the expectations, the expected cold
turns, the parallel-safety excess of the later turns, and each point's approximations.

Both of the engine's paths (``sim.analytic.agent.engine``: with compaction and without)
end here.
"""

from __future__ import annotations

import numpy as np

from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analytic.agent.connection_loss import ColdTurns
from sim.analytic.agent.excess import Excess
from sim.analytic.agent.expectations import Approximation, Expectations
from sim.analytic.agent.layout import TurnCount, total
from sim.analytic.agent.turn_table import (
    API_CPU,
    CACHED,
    QUANTITIES,
    SAFETY_CPU,
    TTFT,
    UNCACHED,
)
from sim.analytic.agent.varying import held_once
from sim.turn.transports import Transport


def expectations_of(
    sums: np.ndarray,
    count: TurnCount,
    cold: ColdTurns,
    approximations: tuple[tuple[str, ...], ...],
) -> Expectations:
    """The results of per-rollout sums (points, QUANTITIES), either path's."""
    return Expectations(
        stage_s=sums[:, : len(STAGES)],
        turns=count.turns,
        cold_turns=cold_turn_count(count, cold),
        ttft_sum_s=sums[:, TTFT],
        api_cpu_s=sums[:, API_CPU],
        safety_cpu_s=sums[:, SAFETY_CPU],
        cached_prompt_tokens=sums[:, CACHED],
        uncached_prompt_tokens=sums[:, UNCACHED],
        approximations=approximations,
    )


def cold_turn_count(count: TurnCount, cold: ColdTurns) -> np.ndarray:
    """Expected connections per rollout: turn 0's, plus every later turn's it reaches."""
    reach, probability = held_once(count.reach), held_once(cold.probability)
    later = np.where(count.index >= 1, reach * probability, 0.0)
    counted = probability[:, 0] + total(later)  # once when neither varies over the points
    return np.broadcast_to(counted, count.reach.shape[:1]).copy()


def later_excess(count: TurnCount, cold: ColdTurns, excess: Excess) -> np.ndarray:
    """The expected excess of turns k >= 1 in the safety stage and in TTFT, per point."""
    out = np.zeros((count.reach.shape[0], QUANTITIES))
    if not excess.approximate.any():
        return out  # no later turn has an excess: every term is +0.0
    shares = (cold.probability, 1.0 - cold.probability)
    added = sum(
        total(count.reach * share * later)
        for share, later in zip(shares, excess.later, strict=True)
    )
    out[:, STAGE_COLUMN[Stage.SAFETY]] = added
    out[:, TTFT] = added
    return out


def later_excess_per_turn(cold: ColdTurns, excess: Excess) -> np.ndarray:
    """The expected excess of each turn k >= 1 given it is reached, in the safety stage and
    in TTFT, shape (points, turns, QUANTITIES)."""
    shares = (cold.probability, 1.0 - cold.probability)
    added = sum(share * later for share, later in zip(shares, excess.later, strict=True))
    out = np.zeros((*cold.probability.shape, QUANTITIES))
    out[..., STAGE_COLUMN[Stage.SAFETY]] = added
    out[..., TTFT] = added
    return out


def approximation_flags(
    transport: Transport,
    cold: ColdTurns,
    excess: np.ndarray,
    parallel: np.ndarray,
    compaction: np.ndarray,
    resident: np.ndarray,
) -> tuple[tuple[str, ...], ...]:
    flags = (
        (Approximation.CONNECTION_LOSS, cold.from_durations & transport.is_websocket),
        (Approximation.ROTATION_GRID, cold.on_grid),
        (Approximation.SESSION_CONNECTION, cold.session & transport.is_websocket),
        (Approximation.PARALLEL_EXCESS, excess),
        (Approximation.PREFIX_RESIDENCY, resident),
        (Approximation.PARALLEL_TOOLS, parallel),
        (Approximation.COMPACTION, compaction),
    )
    # One tuple per combination of flags that occurs, shared by the points that have it.
    zero = np.zeros((), dtype=int)
    code = sum((mask.astype(int) << bit for bit, (_, mask) in enumerate(flags)), zero).tolist()
    names = {
        combination: tuple(
            str(name) for bit, (name, _) in enumerate(flags) if combination >> bit & 1
        )
        for combination in set(code)
    }
    return tuple(map(names.__getitem__, code))
