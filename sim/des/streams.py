"""Independent random streams per block of rollouts and per kind of draw.

A stream is keyed by (seed, block, kind), so a draw of one kind never shifts
another kind's draws: two transports run with one seed see the same workload
(common random numbers), and a rollout's draws do not depend on how many
rollouts are run after it.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

BLOCK_ROLLOUTS = 1024
"""Rollouts that share one set of streams (and are simulated together)."""


class Draw(IntEnum):
    """Kinds of random draws; each kind has its own stream."""

    TOOL_CALLS = 0
    OUTPUT_TOKENS = 1
    TOOL_KIND = 2
    TOOL_TIME = 3
    TOOL_OUTPUT = 4
    DECODE_RATE = 5
    RENDER_CACHE = 6
    CONNECTION_FAULTS = 7
    ARRIVALS = 8
    PARALLEL_CALLS = 9
    EXTRA_CALLS = 10
    """Kind, time and output of the calls beyond a turn's first (the first keeps its streams)."""
    SERVER_ERRORS = 11
    RETRY_JITTER = 12
    ROUTING = 13
    THINK_TIME = 14
    """The single agent's pauses between rollouts when it keeps its connection."""
    RATE_LIMIT = 15
    """When clients told the same retry-after come back (the fleet's rate limit)."""


def stream(seed: int, block: int, kind: Draw, replication: int = 0) -> np.random.Generator:
    """The generator for one kind of draw in one block of rollouts of one replication.

    Replication 0 is the single-agent engine's stream, so a fleet's first
    replication sees the same workload draws as ``loopbudget run``.
    """
    key = (block, kind) if replication == 0 else (block, kind, replication)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))
