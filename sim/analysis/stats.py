"""Confidence intervals: for means and ratios of means over independent rollouts (normal),
and for statistics across a few independent replications (Student-t)."""

from __future__ import annotations

import numpy as np
from scipy.special import stdtrit

Z95 = 1.959963984540054
"""Two-sided 95% normal quantile."""


def mean_ci95(values: np.ndarray) -> tuple[float, float]:
    """95% CI of the mean of independent values (normal approximation)."""
    n = values.size
    mean = float(values.mean())
    if n < 2:
        return mean, mean
    half = Z95 * float(values.std(ddof=1)) / np.sqrt(n)
    return mean - half, mean + half


def ratio_ci95(numerator: np.ndarray, denominator: np.ndarray) -> tuple[float, float]:
    """95% CI of sum(numerator) / sum(denominator) over independent rows (delta method)."""
    ratio = float(numerator.sum() / denominator.sum())
    influence = (numerator - ratio * denominator) / denominator.mean()
    return _around(ratio, influence)


def reduction(
    a_num: np.ndarray, a_den: np.ndarray, b_num: np.ndarray, b_den: np.ndarray
) -> tuple[float, tuple[float, float]]:
    """1 - (mean b) / (mean a) of two ratio estimators on paired rows, with its 95% CI.

    Rows are rollouts; a row of side a and the same row of side b saw the same
    workload draws (common random numbers), so the pairing tightens the CI.
    With ``*_den`` all ones this is the reduction of plain means.
    """
    ratio_a = a_num.sum() / a_den.sum()
    ratio_b = b_num.sum() / b_den.sum()
    relative = ratio_b / ratio_a
    influence = relative * (
        (b_num - ratio_b * b_den) / b_num.mean() - (a_num - ratio_a * a_den) / a_num.mean()
    )
    low, high = _around(float(relative), influence)
    return 1.0 - float(relative), (1.0 - high, 1.0 - low)


def _around(estimate: float, influence: np.ndarray) -> tuple[float, float]:
    n = influence.size
    if n < 2:
        return estimate, estimate
    half = Z95 * float(influence.std(ddof=1)) / np.sqrt(n)
    return estimate - half, estimate + half


def t_half_width(std: np.ndarray | float, n: np.ndarray | int) -> np.ndarray | float:
    """Half-width of the Student-t 95% interval of a mean of ``n`` >= 2 independent values
    whose sample standard deviation (ddof 1) is ``std``: t(0.975, n - 1) std / sqrt(n)."""
    return stdtrit(np.asarray(n) - 1, 0.975) * std / np.sqrt(n)


def t_interval(values: np.ndarray) -> tuple[float, float] | None:
    """Student-t 95% interval of the mean of a few independent values (None for one)."""
    n = values.size
    if n < 2:
        return None
    mean = float(values.mean())
    half = float(t_half_width(values.std(ddof=1), n))
    return mean - half, mean + half


def log_t_interval(values: np.ndarray) -> tuple[float, float] | None:
    """The Student-t 95% interval of a positive mean on the log scale (delta method):
    ``mean x exp(+- t s / (mean sqrt(n)))``, so both bounds stay positive."""
    n = values.size
    mean = float(values.mean())
    if n < 2 or mean <= 0:
        return None
    half = float(t_half_width(values.std(ddof=1), n)) / mean
    return mean * float(np.exp(-half)), mean * float(np.exp(half))
