"""The documented caps on input and on a run's resources, and how to raise them.

Each cap has a default and an environment variable that raises (or lowers) it
deliberately, e.g. ``LOOPBUDGET_MAX_MEMORY_MB=8192 loopbudget run ...``.
``docs/errors.md`` lists them; ``sim.analysis.estimates`` compares a run's
estimated memory and work with them before the run starts.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from models.errors import ScenarioError

MAX_NESTING = 32
"""Deepest nesting of arrays and inline tables in a TOML or JSON input (a mixture of
mixtures takes two levels per level).  Fixed: it keeps parsing far from Python's
recursion limit."""


@dataclass(frozen=True)
class Cap:
    """A limit with a default, a unit and the environment variable that overrides it."""

    what: str
    env: str
    default: float
    unit: str
    scale: float = 1.0
    """What one ``unit`` is in the quantity compared (e.g. 2**20 bytes per MB)."""

    def limit(self) -> float:
        """The cap in the compared quantity (bytes for MB caps); a bad override is one line."""
        text = os.environ.get(self.env)
        if text is None:
            return self.default * self.scale
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise ScenarioError(f"{self.env} = {text!r}: must be a number > 0 ({self.unit})")
        return value * self.scale

    def how_to_raise(self, needed: float) -> str:
        """The override that would admit ``needed`` (in the compared quantity)."""
        return f"{self.env}={_round_up(needed / self.scale)}"


MB = 2.0**20

INPUT_SIZE = Cap("input file size", "LOOPBUDGET_MAX_INPUT_MB", 4, "MB", MB)
"""Largest scenario, sweep or uploaded file read, so a stray large file is refused unread."""

MEMORY = Cap("memory", "LOOPBUDGET_MAX_MEMORY_MB", 2048, "MB", MB)
"""Largest estimated peak memory of one run (its arrays, records and traces)."""

TURNS = Cap("simulated turns", "LOOPBUDGET_MAX_TURNS", 1e8, "turns")
"""Most turns one simulation may run (all rollouts and replications): about half an hour."""

SWEEP_TURNS = Cap("sweep's simulated turns", "LOOPBUDGET_MAX_SWEEP_TURNS", 1e10, "turns")
"""Most turns a DES sweep may simulate over all its points, seeds and transports: about
55 core-hours, so a sweep of a million points is a decision, not an accident."""

ROLLOUT_TURNS = Cap("rollout length", "LOOPBUDGET_MAX_ROLLOUT_TURNS", 10_000, "turns")
"""Most turns one rollout may have (tool calls + 1), for both engines: the analytic engine
lays out the longest rollout turn by turn, and the DES draws whole blocks of them."""


def _round_up(value: float) -> str:
    """A round number at least ``value``: two significant digits, rounded up."""
    if value <= 0:
        return "1"
    magnitude = 10 ** max(0, math.floor(math.log10(value)) - 1)
    return f"{math.ceil(value / magnitude) * magnitude:.0f}"
