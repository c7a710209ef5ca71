"""Bare SimPy skeletons: the cost of pure event handling, the engine's baseline.

Rollouts run in blocks like the engine's (one environment and one process per
block).  Each turn yields one ``env.timeout`` per entry of a constant duration
array and does nothing else: with 16 entries it is a naive model with one
timeout per stage, with 2 it is the engine's coalesced request and tool.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import simpy

from sim.des.streams import BLOCK_ROLLOUTS


def run_skeleton(turns_per_rollout: Sequence[int], durations_s: np.ndarray) -> float:
    """Run the rollouts; return the simulated seconds summed over blocks."""
    timeouts_s = np.asarray(durations_s, dtype=float).tolist()
    simulated_s = 0.0
    for first in range(0, len(turns_per_rollout), BLOCK_ROLLOUTS):
        env = simpy.Environment()
        block = turns_per_rollout[first : first + BLOCK_ROLLOUTS]
        env.process(_agent(env, block, timeouts_s))
        env.run()
        simulated_s += env.now
    return simulated_s


def _agent(
    env: simpy.Environment, turns_per_rollout: Sequence[int], timeouts_s: list[float]
) -> Iterator[simpy.Event]:
    for turns in turns_per_rollout:
        for _ in range(turns):
            for timeout_s in timeouts_s:
                yield env.timeout(timeout_s)
