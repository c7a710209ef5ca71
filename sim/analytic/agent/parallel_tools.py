"""A turn's tool time and output when the model asks for several function calls at once.

The client runs a turn's m calls concurrently (m ~ ``parallel_calls_per_turn``),
so the turn's tool time is the slowest call's plus the overhead of each call
beyond the first: T = max(X_1 .. X_m) + (m - 1) c, the X_i drawn from the
tool mix.  Its distribution is exact in closed form,
P(T <= x) = sum_m P(m) F(x - (m - 1) c)^m, and every expectation the analytic
engine takes of it (mean, survival, Laplace transform, partial expectation)
comes from one discretisation: the support is cut on a fine geometric grid,
each cell's mass placed at its conditional mean (so the mean is the trapezoid
rule's value of the integral of the survival function, E[max] = integral of
1 - F^m).  The outputs all enter the next request: their sum has mean E[m] mu
and variance E[m] sigma^2 + Var(m) mu^2, taken as a log-normal with those
moments (used only by the parallel-safety excess).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from models.distributions import Empirical, LogNormal

GRID_POINTS = 4096
"""Cells of the grid the survival function is integrated on."""
ATOMS = 256
"""Values standing for the turn's tool time (cells merged by equal probability)."""
TAIL = 1e-12
"""The grid reaches where P(one call > x) falls below this."""


def expected_maximum(tool_time: Any, calls: int) -> float:
    """E[max of ``calls`` independent draws of ``tool_time``]: integral of 1 - F(x)^m dx."""
    grid, survival = _grid(tool_time)
    below = 1.0 - (1.0 - survival) ** calls
    return float(np.sum((below[1:] + below[:-1]) / 2 * np.diff(grid)))


@lru_cache(maxsize=256)
def turn_tool_time(tool_time: Any, parallel_calls: Any, overhead_s: float) -> Any:
    """The distribution of a tool-calling turn's tool time (the tool mix itself for one call)."""
    values, probabilities = parallel_calls.support()
    if values.size == 1 and values[0] == 1:
        return tool_time
    grid, survival = _grid(tool_time)
    atoms, weights = [], []
    for calls, probability in zip(values.astype(int), probabilities, strict=True):
        value, mass = merged_atoms(grid, 1.0 - (1.0 - survival) ** calls)
        atoms.append(value + (calls - 1) * overhead_s)
        weights.append(mass * probability)
    return Empirical(values=tuple(np.concatenate(atoms)), weights=tuple(np.concatenate(weights)))


@lru_cache(maxsize=256)
def turn_tool_output(tool_output: Any, parallel_calls: Any) -> Any:
    """The distribution of the output tokens a tool-calling turn adds (moment-matched)."""
    values, probabilities = parallel_calls.support()
    if values.size == 1 and values[0] == 1:
        return tool_output
    calls_mean = float(probabilities @ values)
    calls_variance = float(probabilities @ (values - calls_mean) ** 2)
    mean = calls_mean * tool_output.mean
    variance = calls_mean * tool_output.variance + calls_variance * tool_output.mean**2
    sigma2 = math.log1p(variance / mean**2)
    return LogNormal(median=mean / math.exp(sigma2 / 2), sigma=math.sqrt(sigma2))


def _grid(tool_time: Any) -> tuple[np.ndarray, np.ndarray]:
    """A geometric grid from far below the median to the far tail, and P(X > x) on it."""
    high = max(tool_time.mean, 1e-9)
    while tool_time.survival(high) > TAIL:
        high *= 2
    low = high * 1e-9
    grid = np.concatenate([[0.0], np.geomspace(low, high, GRID_POINTS)])
    return grid, np.asarray(tool_time.survival(grid), dtype=float)


def merged_atoms(grid: np.ndarray, survival: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cells merged into ``ATOMS`` groups of about equal mass, each at its conditional mean.

    E[X; a < X <= b] = a S(a) - b S(b) + integral_a^b S, the integral by the trapezoid rule.
    """
    mass = survival[:-1] - survival[1:]
    area = (survival[1:] + survival[:-1]) / 2 * np.diff(grid)
    partial = grid[:-1] * survival[:-1] - grid[1:] * survival[1:] + area
    mass[-1] += survival[-1]
    partial[-1] += grid[-1] * survival[-1]
    group = np.minimum((np.cumsum(mass) - mass / 2) * ATOMS, ATOMS - 1).astype(int)
    group_mass = np.bincount(group, weights=mass, minlength=ATOMS)
    group_partial = np.bincount(group, weights=partial, minlength=ATOMS)
    held = group_mass > 0
    return group_partial[held] / group_mass[held], group_mass[held]
