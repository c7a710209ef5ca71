"""A tool call's output after truncation at a token cap: min(X, cap).

Its distribution is X's below the cap with an atom at the cap holding
P(X > cap).  For the analytic engine it is discretised as the parallel calls'
slowest call is (``sim.analytic.agent.parallel_tools``): a fine grid on [0, cap], each
cell's mass at its conditional mean, so the mean is exact up to the trapezoid
rule's error, E[min(X, c)] = integral_0^c P(X > x) dx.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from models.distributions import Empirical
from sim.analytic.agent.parallel_tools import GRID_POINTS, merged_atoms


@lru_cache(maxsize=256)
def capped(distribution: Any, cap_tokens: float) -> Any:
    """The distribution of min(X, ``cap_tokens``); X itself when the cap is 0 (no cap)."""
    if cap_tokens <= 0 or distribution.survival(cap_tokens) == 0:
        return distribution
    grid = np.linspace(0.0, cap_tokens, GRID_POINTS + 1)
    survival = np.asarray(distribution.survival(grid), dtype=float)
    values, weights = merged_atoms(grid, survival)
    return Empirical(values=tuple(values), weights=tuple(weights))
