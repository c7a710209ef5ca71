"""Distributions: sampled moments against their analytic values, scipy.stats and invariants.

Sampled means and variances use n = 200,000 draws from a fixed seed; a sampled
statistic must lie within ``Z_TOLERANCE`` standard errors of the analytic value,
the standard error being the one of that statistic at this n (estimated from
the sample where no closed form is at hand).
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from scipy import stats

from models.distributions import Distribution

SAMPLES = 200_000
Z_TOLERANCE = 4.5
"""Standard errors allowed: a false alarm per statistic has probability below 1e-5."""

_ADAPTER = TypeAdapter(Distribution)


def dist(table: Any) -> Any:
    """Validate a TOML-style table (or a bare number) as a Distribution field."""
    return _ADAPTER.validate_python(table)


DECODE_MIXTURE = {
    "kind": "mixture",
    "weights": [0.85, 0.15],
    "components": [
        {"kind": "lognormal", "median": 1000.0, "sigma": 0.1},
        {"kind": "uniform", "low": 2000.0, "high": 4000.0},
    ],
}

CASES: dict[str, Any] = {
    "constant": 3.5,
    "exponential": {"kind": "exponential", "mean": 2.0},
    "lognormal": {"kind": "lognormal", "median": 110.0, "sigma": 0.7},
    "uniform": {"kind": "uniform", "low": 2000.0, "high": 4000.0},
    "empirical": {
        "kind": "empirical",
        "values": [20, 25, 30, 35, 40],
        "weights": [0.2, 0.25, 0.25, 0.2, 0.1],
    },
    "mixture": DECODE_MIXTURE,
    "nested-mixture": {
        "kind": "mixture",
        "weights": [1, 2, 1],
        "components": [
            {"kind": "exponential", "mean": 0.5},
            {"kind": "constant", "value": 1.5},
            DECODE_MIXTURE,
        ],
    },
}

SCIPY: dict[str, Any] = {
    "exponential": stats.expon(scale=2.0),
    "lognormal": stats.lognorm(s=0.7, scale=110.0),
    "uniform": stats.uniform(loc=2000.0, scale=2000.0),
    "empirical": stats.rv_discrete(values=([20, 25, 30, 35, 40], [0.2, 0.25, 0.25, 0.2, 0.1])),
}
"""The same distributions as frozen scipy.stats objects (an independent implementation)."""


def draws(name: str) -> np.ndarray:
    return dist(CASES[name]).sample(np.random.default_rng(20260204), SAMPLES)


def within(estimate: float, expected: float, standard_error: float) -> bool:
    return abs(estimate - expected) <= Z_TOLERANCE * standard_error + 1e-12 * abs(expected)


@pytest.mark.parametrize("name", CASES)
def test_sampled_mean_matches_analytic_mean(name: str) -> None:
    d, x = dist(CASES[name]), draws(name)
    standard_error = math.sqrt(d.variance / SAMPLES)
    assert within(float(x.mean()), d.mean, standard_error)


@pytest.mark.parametrize("name", CASES)
def test_sampled_variance_matches_analytic_variance(name: str) -> None:
    d, x = dist(CASES[name]), draws(name)
    squared_deviations = (x - x.mean()) ** 2
    standard_error = float(squared_deviations.std(ddof=1)) / math.sqrt(SAMPLES)
    assert within(float(x.var(ddof=1)), d.variance, standard_error)


@pytest.mark.parametrize("name", SCIPY)
def test_mean_and_variance_agree_with_scipy(name: str) -> None:
    d, reference = dist(CASES[name]), SCIPY[name]
    assert d.mean == pytest.approx(reference.mean(), rel=1e-12)
    assert d.variance == pytest.approx(reference.var(), rel=1e-12)


def test_mixture_moments_by_the_law_of_total_variance() -> None:
    d = dist(DECODE_MIXTURE)
    parts = [stats.lognorm(s=0.1, scale=1000.0), stats.uniform(loc=2000.0, scale=2000.0)]
    weights = np.array([0.85, 0.15])
    means = np.array([p.mean() for p in parts])
    second_moments = np.array([p.var() + p.mean() ** 2 for p in parts])
    assert d.mean == pytest.approx(weights @ means, rel=1e-12)
    assert d.variance == pytest.approx(weights @ second_moments - (weights @ means) ** 2, rel=1e-12)


FINITE_RECIPROCAL = ("constant", "lognormal", "uniform", "empirical", "mixture")


@pytest.mark.parametrize("name", FINITE_RECIPROCAL)
def test_mean_reciprocal_matches_sampling(name: str) -> None:
    reciprocal = 1.0 / draws(name)
    standard_error = float(reciprocal.std(ddof=1)) / math.sqrt(SAMPLES)
    assert within(float(reciprocal.mean()), dist(CASES[name]).mean_reciprocal(), standard_error)


@pytest.mark.parametrize("name", ("lognormal", "uniform", "empirical"))
def test_mean_reciprocal_matches_scipy_expectation(name: str) -> None:
    expected = SCIPY[name].expect(lambda x: 1.0 / x)
    assert dist(CASES[name]).mean_reciprocal() == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(
    "table",
    [
        {"kind": "exponential", "mean": 1.0},
        {"kind": "uniform", "low": 0.0, "high": 1.0},
        0.0,
        {"kind": "empirical", "values": [0, 1], "weights": [1, 1]},
    ],
)
def test_mean_reciprocal_is_infinite_with_mass_near_zero(table: Any) -> None:
    assert dist(table).mean_reciprocal() == math.inf


POINTS = (0.0, 0.5, 1.9, 22.0, 30.0, 110.0, 180.0, 1000.0, 2500.0, 3999.0)


@pytest.mark.parametrize("name", SCIPY)
def test_survival_agrees_with_scipy(name: str) -> None:
    d, reference = dist(CASES[name]), SCIPY[name]
    for x in POINTS:
        assert d.survival(x) == pytest.approx(float(reference.sf(x)), abs=1e-12), x


def test_mixture_survival_is_the_weighted_survival_of_its_parts() -> None:
    d = dist(DECODE_MIXTURE)
    lognormal, uniform = stats.lognorm(s=0.1, scale=1000.0), stats.uniform(loc=2000, scale=2000)
    for x in POINTS:
        expected = 0.85 * lognormal.sf(x) + 0.15 * uniform.sf(x)
        assert d.survival(x) == pytest.approx(float(expected), abs=1e-12), x


@pytest.mark.parametrize("name", CASES)
def test_survival_matches_the_sampled_fraction_above(name: str) -> None:
    d, x = dist(CASES[name]), draws(name)
    for point in POINTS:
        p = d.survival(point)
        standard_error = math.sqrt(max(p * (1 - p), 1e-12) / SAMPLES)
        assert within(float((x > point).mean()), p, standard_error), point


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        (-1.0, "greater than or equal to 0"),
        ({"kind": "exponential", "mean": 0.0}, "greater than 0"),
        ({"kind": "exponential", "mean": -2.0}, "greater than 0"),
        ({"kind": "lognormal", "median": 0.0, "sigma": 0.5}, "greater than 0"),
        ({"kind": "lognormal", "median": 1.0, "sigma": -0.1}, "greater than or equal to 0"),
        ({"kind": "uniform", "low": 2.0, "high": 1.0}, "must be >= low"),
        ({"kind": "uniform", "low": -1.0, "high": 1.0}, "greater than or equal to 0"),
        ({"kind": "empirical", "values": [1, 2], "weights": [1]}, "1 weights for 2 values"),
        ({"kind": "empirical", "values": [1, 2], "weights": [1, -1]}, "weights must be >= 0"),
        ({"kind": "empirical", "values": [1, 2], "weights": [0, 0]}, "not all zero"),
        ({"kind": "empirical", "values": [-1, 2], "weights": [1, 1]}, "values must be >= 0"),
        (
            {"kind": "mixture", "weights": [1, 1, 1], "components": [1.0, 2.0]},
            "3 weights for 2 components",
        ),
        ({"kind": "weibull", "shape": 1.0}, "does not match any of the expected tags"),
    ],
)
def test_invalid_parameters_are_rejected(table: Any, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        dist(table)


_SIZE = st.floats(1e-6, 1e6)
_BASE = st.one_of(
    st.floats(0, 1e6),
    st.builds(lambda m: {"kind": "exponential", "mean": m}, _SIZE),
    st.builds(lambda m, s: {"kind": "lognormal", "median": m, "sigma": s}, _SIZE, st.floats(0, 3)),
    st.builds(
        lambda b: {"kind": "uniform", "low": min(b), "high": max(b)},
        st.tuples(st.floats(0, 1e6), st.floats(0, 1e6)),
    ),
    st.integers(1, 5).flatmap(
        lambda k: st.builds(
            lambda v, w: {"kind": "empirical", "values": v, "weights": w},
            st.lists(st.floats(0, 1e6), min_size=k, max_size=k),
            st.lists(st.floats(0.01, 10), min_size=k, max_size=k),
        )
    ),
)
TABLES = st.recursive(
    _BASE,
    lambda children: st.lists(children, min_size=1, max_size=3).flatmap(
        lambda parts: st.builds(
            lambda w: {"kind": "mixture", "weights": w, "components": parts},
            st.lists(st.floats(0.01, 10), min_size=len(parts), max_size=len(parts)),
        )
    ),
    max_leaves=5,
)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(table=TABLES, seed=st.integers(0, 2**32 - 1))
def test_no_negative_samples_and_sane_moments(table: Any, seed: int) -> None:
    d = dist(table)
    x = d.sample(np.random.default_rng(seed), 500)
    assert x.shape == (500,)
    assert np.all(np.isfinite(x))
    assert np.all(x >= 0)
    assert d.mean >= 0
    assert d.variance >= -1e-9 * max(1.0, d.mean**2)
    assert d.survival(-1.0) == pytest.approx(1.0, abs=1e-12)
    levels = [d.survival(v) for v in (0.0, 1.0, 1e3, 1e9)]
    assert all(-1e-12 <= p <= 1.0 + 1e-12 for p in levels)
    assert all(later <= earlier + 1e-12 for earlier, later in pairwise(levels))
