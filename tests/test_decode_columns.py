"""The decode time over whole columns gives each point the bits it gets alone.

``sim.analytic.agent.decode_columns`` evaluates the Laplace transform and the
cumulants of a turn's random part (decode time plus tool time) for many
points at once; ``DecodeTime`` and ``cumulants`` evaluate one point.  Every
point, whatever its decode-rate law (a constant, log-normals, histograms of
different sizes, a uniform), output-token law and drop rate, must agree bit
for bit, so a sweep's rows do not depend on how its points are batched.
"""

from __future__ import annotations

import numpy as np

from models.distributions import Constant, Empirical, Exponential, LogNormal, Mixture, Uniform
from sim.analytic.agent.columns import ObjectColumn
from sim.analytic.agent.decode_columns import decode_laplace, noise_cumulants
from sim.analytic.agent.turn_time import DecodeTime, cumulants

RATES = [
    Constant(value=40.0),
    Constant(value=1000.0),
    LogNormal(median=900.0, sigma=0.3),
    LogNormal(median=65.0, sigma=0.0),
    Empirical(values=(500.0, 1500.0, 4000.0), weights=(1.0, 2.0, 1.0)),
    Empirical(values=(200.0, 2000.0), weights=(3.0, 1.0)),
    Uniform(low=300.0, high=3000.0),
    Constant(value=4000.0),
]
TOKENS = [
    LogNormal(median=400.0, sigma=0.9),
    Exponential(mean=250.0),
    Empirical(values=(10.0, 800.0), weights=(1.0, 1.0)),
]
TOOLS = [
    Mixture(weights=(1.0, 3.0), components=(Constant(value=0.5), LogNormal(median=2.0, sigma=1.0))),
    Exponential(mean=1.5),
]


def _columns(points: int) -> tuple[ObjectColumn, ObjectColumn, ObjectColumn, np.ndarray]:
    rng = np.random.default_rng(7)
    columns = (
        ObjectColumn(tuple(TOKENS), rng.integers(len(TOKENS), size=points)),
        ObjectColumn(tuple(RATES), rng.integers(len(RATES), size=points)),
        ObjectColumn(tuple(TOOLS), rng.integers(len(TOOLS), size=points)),
    )
    drops_per_s = rng.choice([0.0, 1.0 / 3600, 30.0 / 3600, 0.05], size=(points, 1))
    return (*columns, drops_per_s)


def _at(column: ObjectColumn, point: int):
    return column.values[column.index[point]]


def test_laplace_of_the_decode_time_over_columns_is_each_points_own_bit_for_bit() -> None:
    tokens, rates, _, drops_per_s = _columns(200)
    together = decode_laplace(tokens, rates, drops_per_s)
    alone = np.concatenate(
        [
            DecodeTime(_at(tokens, p), _at(rates, p)).laplace(drops_per_s[p : p + 1])
            for p in range(200)
        ]
    )
    assert together.shape == (200, 1)
    np.testing.assert_array_equal(together, alone)
    assert np.all((together > 0) & (together <= 1 + 1e-12))  # a quadrature rounds


def test_cumulants_of_a_turns_random_part_over_columns_are_each_points_own_bit_for_bit() -> None:
    tokens, rates, tools, _ = _columns(200)
    together = noise_cumulants(tokens, rates, tools)
    alone = np.array(
        [cumulants(DecodeTime(_at(tokens, p), _at(rates, p)), _at(tools, p)) for p in range(200)]
    )
    np.testing.assert_array_equal(together, alone)
    assert np.all(together[:, 1] > 0)


def test_number_columns_hold_each_distinct_value_once_as_python_floats() -> None:
    numbers = np.array([0.5, 0.0, 0.5, 2.0, 0.0])
    column = ObjectColumn.of_numbers(numbers)
    assert sorted(column.values) == [0.0, 0.5, 2.0]
    assert all(type(value) is float for value in column.values)
    assert [column.values[i] for i in column.index] == numbers.tolist()
