"""The expectations the analytic engine takes from a distribution, against scipy and theory.

``partial_expectation`` (E[max(0, X - k)]), ``laplace`` (E[exp(-s X)]),
``raw_moment`` (E[X^n]) and ``quadrature`` are compared with scipy.stats'
numerical expectations of the same distributions (an independent
implementation), and the array methods must give, element by element, what
they give for one number at a time.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import integrate
from test_distributions import CASES, SCIPY, TABLES, dist

KS = (0.0, 0.5, 1.9, 22.0, 30.0, 110.0, 180.0, 1000.0, 2500.0, 3999.0)
SS = (0.0, 1e-4, 1e-3, 0.02, 0.3)


def scipy_expect(name: str, f: Any) -> float:
    reference = SCIPY[name]
    if name == "empirical":
        return float(sum(p * f(float(v)) for v, p in zip(reference.xk, reference.pk, strict=True)))
    return float(reference.expect(f, epsabs=1e-13, epsrel=1e-11, limit=200))


@pytest.mark.parametrize("name", SCIPY)
def test_partial_expectation_agrees_with_scipy(name: str) -> None:
    d = dist(CASES[name])
    for k in KS:
        expected = scipy_expect(name, lambda x, k=k: max(0.0, x - k))
        if name != "empirical":
            # E[(X - k)+] is the integral of the survival function above k (quad
            # misses a kink far in the tail).
            expected = integrate.quad(SCIPY[name].sf, k, np.inf, epsabs=1e-13, limit=200)[0]
        assert float(d.partial_expectation(k)) == pytest.approx(expected, rel=1e-7, abs=1e-9), k


@pytest.mark.parametrize("name", SCIPY)
def test_laplace_transform_agrees_with_scipy(name: str) -> None:
    d = dist(CASES[name])
    for s in SS:
        expected = scipy_expect(name, lambda x, s=s: math.exp(-s * x))
        assert float(d.laplace(s)) == pytest.approx(expected, rel=1e-8, abs=1e-12), s


@pytest.mark.parametrize("name", SCIPY)
@pytest.mark.parametrize("n", [1, 2, 3, 4, -1, -2])
def test_raw_moments_agree_with_scipy(name: str, n: int) -> None:
    d = dist(CASES[name])
    if n < 0 and name == "exponential":
        assert d.raw_moment(n) == math.inf
        return
    assert d.raw_moment(n) == pytest.approx(scipy_expect(name, lambda x: x**n), rel=1e-8)


@pytest.mark.parametrize("name", CASES)
def test_first_two_raw_moments_are_the_mean_and_variance(name: str) -> None:
    d = dist(CASES[name])
    assert d.raw_moment(0) == pytest.approx(1.0, rel=1e-12)
    assert d.raw_moment(1) == pytest.approx(d.mean, rel=1e-12)
    assert d.raw_moment(2) - d.mean**2 == pytest.approx(d.variance, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_quadrature_reproduces_the_low_moments(name: str) -> None:
    d = dist(CASES[name])
    values, probabilities = d.quadrature(48)
    assert probabilities.sum() == pytest.approx(1.0, rel=1e-12)
    assert np.all(values >= 0) and np.all(probabilities >= 0)
    for n in (1, 2, 3):
        assert float(probabilities @ values**n) == pytest.approx(d.raw_moment(n), rel=1e-9)


def test_a_mixture_is_the_weighted_sum_of_its_parts() -> None:
    d = dist(CASES["nested-mixture"])
    p = np.array(d.weights) / sum(d.weights)
    k, s = np.array(KS), np.array(SS)
    parts = list(zip(p, d.components, strict=True))
    partial = sum(w * c.partial_expectation(k) for w, c in parts)
    np.testing.assert_allclose(d.partial_expectation(k), partial, rtol=1e-14)
    np.testing.assert_allclose(d.laplace(s), sum(w * c.laplace(s) for w, c in parts), rtol=1e-14)
    assert d.raw_moment(3) == pytest.approx(sum(w * c.raw_moment(3) for w, c in parts))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(table=TABLES)
def test_array_methods_equal_their_one_number_values(table: Any) -> None:
    d = dist(table)
    grid = np.array([[0.0, 0.5], [3.0, 1e3]])
    for method in (d.partial_expectation, d.laplace, d.survival):
        at_once = method(grid)
        assert at_once.shape == grid.shape
        one_by_one = np.array([[float(method(v)) for v in row] for row in grid])
        assert np.array_equal(at_once, one_by_one), method.__name__


@settings(max_examples=60, derandomize=True, deadline=None)
@given(table=TABLES)
def test_partial_expectation_is_a_stop_loss_transform(table: Any) -> None:
    """E[(X - k)+] is E[X] - k for k <= 0, then falls, convex, never below max(0, E[X] - k)."""
    d = dist(table)
    scale = max(d.mean, 1e-6)
    k = scale * np.array([-1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 1e3])
    pe = d.partial_expectation(k)
    tolerance = 1e-9 * scale
    assert pe[0] == pytest.approx(d.mean + scale, rel=1e-9, abs=tolerance)
    assert pe[1] == pytest.approx(d.mean, rel=1e-9, abs=tolerance)
    assert np.all(pe >= np.maximum(0.0, d.mean - k) - tolerance)
    assert all(later <= earlier + tolerance for earlier, later in pairwise(pe))
    slopes = np.diff(pe) / np.diff(k)
    assert all(b >= a - 1e-9 for a, b in pairwise(slopes)), "convex"


@settings(max_examples=60, derandomize=True, deadline=None)
@given(table=TABLES)
def test_laplace_transform_falls_from_one(table: Any) -> None:
    d = dist(table)
    scale = 1.0 / max(d.mean, 1e-6)
    values = d.laplace(scale * np.array([0.0, 0.01, 0.1, 1.0, 10.0]))
    assert values[0] == pytest.approx(1.0, rel=1e-12)
    assert np.all(values > -1e-12) and np.all(values <= 1.0 + 1e-12)
    assert all(later <= earlier + 1e-12 for earlier, later in pairwise(values))
    assert values[2] >= math.exp(-0.1) - 1e-9, "Jensen: E[exp(-sX)] >= exp(-s E[X])"
