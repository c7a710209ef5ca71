"""Confidence intervals against printed tables, not against the code's own formulas.

Two-sided 95% Student-t quantiles t(0.975, df), as every statistics text tabulates
them (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2): df 1: 12.706, 2: 4.303,
3: 3.182, 4: 2.776, 9: 2.262, 29: 2.045; the normal quantile 1.960.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.analysis.stats import log_t_interval, mean_ci95, t_half_width, t_interval
from sim.sweep.bands import aggregate

T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 9: 2.262, 29: 2.045}
"""t(0.975, df), to the three decimals of the printed tables."""


def values_with(n: int, mean: float, std: float) -> np.ndarray:
    """n values whose mean and sample standard deviation (ddof 1) are exactly these."""
    z = np.arange(n) - (n - 1) / 2
    return mean + std * z / z.std(ddof=1)


@pytest.mark.parametrize("df", sorted(T_975))
def test_the_t_interval_uses_n_minus_one_degrees_of_freedom(df: int) -> None:
    n = df + 1
    low, high = t_interval(values_with(n, 10.0, 2.0))
    half = T_975[df] * 2.0 / math.sqrt(n)
    assert (high - low) / 2 == pytest.approx(half, abs=1e-3 * 2.0 / math.sqrt(n))
    assert (low + high) / 2 == pytest.approx(10.0)


@pytest.mark.parametrize("df", sorted(T_975))
def test_the_log_t_interval_is_the_t_interval_on_the_log_scale(df: int) -> None:
    """mean x exp(+- t s / (mean sqrt n)): both bounds positive, their geometric mean the mean."""
    n = df + 1
    low, high = log_t_interval(values_with(n, 10.0, 2.0))
    relative_half = T_975[df] * 2.0 / (10.0 * math.sqrt(n))
    assert math.log(high / 10.0) == pytest.approx(relative_half, abs=1e-3 * 0.2 / math.sqrt(n))
    assert math.sqrt(low * high) == pytest.approx(10.0)
    assert low > 0


def test_one_value_has_no_interval() -> None:
    assert t_interval(np.array([3.0])) is None
    assert log_t_interval(np.array([3.0])) is None


def test_the_half_width_is_vectorised_over_sample_sizes() -> None:
    n = np.array([2, 3, 5, 10, 30])
    expected = np.array([T_975[df] for df in (1, 2, 4, 9, 29)]) / np.sqrt(n)
    np.testing.assert_allclose(t_half_width(np.ones(5), n), expected, atol=1e-3)


def test_a_sweep_band_over_seeds_is_the_t_interval_of_their_mean() -> None:
    import pyarrow as pa

    ys = values_with(4, 5.0, 1.0)
    rows = pa.table({"x": [1.0] * 4, "y": ys})
    _, mean, low, high = aggregate(rows, "x", "y")
    assert mean[0] == pytest.approx(5.0)
    assert (high[0] - low[0]) / 2 == pytest.approx(T_975[3] / 2.0, abs=1e-3)


def test_the_normal_interval_of_many_rollouts_uses_1_96() -> None:
    values = values_with(10_000, 3.0, 0.5)
    low, high = mean_ci95(values)
    assert (high - low) / 2 == pytest.approx(1.960 * 0.5 / 100.0, rel=1e-4)
