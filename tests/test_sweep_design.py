"""Design expansion: grid counts and order, ranges, one-at-a-time, sampled designs by seed."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.sweep.axes import Axis
from sim.sweep.design import expand, point_count
from sim.sweep.sweepfile import SweepFile


def sweep_file(*axes: dict[str, Any], **extra: Any) -> SweepFile:
    return SweepFile.model_validate(
        {"name": "t", "base": "codex-spark", "transports": ["http"], "axes": axes, **extra}
    )


def test_a_grid_is_every_combination_with_the_first_axis_slowest() -> None:
    file = sweep_file(
        {"path": "a", "values": [1, 2]},
        {"path": "b", "values": ["x", "y", "z"]},
    )
    points = expand(file)
    assert points == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
        {"a": 2, "b": "z"},
    ]
    assert point_count(file) == 6


def test_a_linear_range_includes_both_ends() -> None:
    values = Axis(path="a", start=10.0, stop=20.0, num=5).grid_values()
    assert values == [10.0, 12.5, 15.0, 17.5, 20.0]


def test_a_log_range_has_a_constant_ratio_and_exact_ends() -> None:
    values = np.array(Axis(path="a", start=30.0, stop=5000.0, num=9, scale="log").grid_values())
    assert values[0] == 30.0 and values[-1] == 5000.0
    ratios = values[1:] / values[:-1]
    assert np.allclose(ratios, ratios[0], rtol=1e-12)


def test_included_values_are_merged_in_order() -> None:
    axis = Axis(path="a", start=30.0, stop=5000.0, num=5, scale="log", include=(65.0, 1000.0))
    values = axis.grid_values()
    assert len(values) == 7
    assert 65.0 in values and 1000.0 in values
    assert values == sorted(values)


def test_an_integer_range_is_rounded_without_repeats() -> None:
    assert Axis(path="a", start=1, stop=4, num=7, integer=True).grid_values() == [1, 2, 3, 4]
    assert all(
        isinstance(v, int)
        for v in Axis(path="a", start=1, stop=9, num=3, integer=True).grid_values()
    )


@settings(max_examples=50, derandomize=True, deadline=None)
@given(
    start=st.floats(1e-3, 1e3),
    span=st.floats(1e-3, 1e4),
    num=st.integers(1, 200),
    scale=st.sampled_from(["linear", "log"]),
)
def test_a_range_has_num_values_inside_its_bounds(
    start: float, span: float, num: int, scale: str
) -> None:
    stop = start + span
    values = Axis(path="a", start=start, stop=stop, num=num, scale=scale).grid_values()
    assert len(values) == num
    assert values[0] == pytest.approx(start, rel=1e-12)
    assert all(start * (1 - 1e-12) <= v <= stop * (1 + 1e-12) for v in values)


def test_one_at_a_time_is_the_base_then_each_value_alone() -> None:
    file = sweep_file(
        {"path": "a", "values": [1, 2]},
        {"path": "b", "start": 0.0, "stop": 1.0, "num": 3},
        design="one-at-a-time",
    )
    points = expand(file)
    assert points == [{}, {"a": 1}, {"a": 2}, {"b": 0.0}, {"b": 0.5}, {"b": 1.0}]
    assert point_count(file) == 6


def sampled(method: str, seed: int, points: int = 20, **axis: Any) -> SweepFile:
    return sweep_file(
        {"path": "a", "low": 2.0, "high": 8.0, **axis},
        {"path": "b", "low": 10.0, "high": 1000.0, "scale": "log"},
        sample={"method": method, "points": points, "seed": seed},
    )


@pytest.mark.parametrize("method", ["random", "lhs"])
def test_a_sampled_design_has_its_count_stays_in_bounds_and_repeats_by_seed(
    method: str,
) -> None:
    points = expand(sampled(method, seed=7))
    assert len(points) == point_count(sampled(method, seed=7)) == 20
    a = np.array([p["a"] for p in points])
    b = np.array([p["b"] for p in points])
    assert a.min() >= 2.0 and a.max() <= 8.0
    assert b.min() >= 10.0 and b.max() <= 1000.0
    assert expand(sampled(method, seed=7)) == points
    assert expand(sampled(method, seed=8)) != points


def test_a_latin_hypercube_puts_one_point_in_every_stratum_of_every_axis() -> None:
    count = 25
    points = expand(sampled("lhs", seed=3, points=count))
    linear = np.array([(p["a"] - 2.0) / 6.0 for p in points])
    logarithmic = np.array([math.log(p["b"] / 10.0) / math.log(100.0) for p in points])
    for unit in (linear, logarithmic):
        strata = np.floor(unit * count).astype(int)
        assert sorted(strata) == list(range(count))


def test_an_integer_sampled_axis_gives_integers_in_bounds() -> None:
    points = expand(sampled("random", seed=1, points=200, integer=True))
    values = {p["a"] for p in points}
    assert all(isinstance(v, int) for v in values)
    assert values == {2, 3, 4, 5, 6, 7, 8}


def test_grid_axes_cross_the_sampled_design() -> None:
    file = sweep_file(
        {"path": "g", "values": [1, 2, 3]},
        {"path": "s", "low": 0.0, "high": 1.0},
        sample={"method": "lhs", "points": 4, "seed": 0},
    )
    points = expand(file)
    assert len(points) == point_count(file) == 12
    samples = [p["s"] for p in points if p["g"] == 1]
    assert all([p["s"] for p in points if p["g"] == g] == samples for g in (2, 3))
