"""Arithmetic written over temporaries (``models.in_place``): the plain expression's bits."""

from __future__ import annotations

import numpy as np

from models.in_place import add_to, divide_by, multiply_by, positive_part, total


def _values(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).lognormal(0.0, 3.0, shape) - 5.0


def test_a_step_writes_over_a_temporary_that_fits_and_gives_the_plain_bits() -> None:
    a, b = _values(1, (1000,)), _values(2, (1000,))
    for step, plain in ((add_to, a + b), (multiply_by, a * b), (divide_by, a / b)):
        temporary = a.copy()
        result = step(temporary, b)
        assert result is temporary
        assert result.tobytes() == plain.tobytes()


def test_a_step_makes_a_new_array_where_the_result_does_not_fit() -> None:
    column = _values(3, (4, 1))
    wide = _values(4, (4, 10))
    result = add_to(column, wide)
    assert result.shape == (4, 10)
    assert result.tobytes() == (column + wide).tobytes()
    assert column.shape == (4, 1)
    counts = np.arange(5)
    assert add_to(counts, 0.5).tobytes() == (counts + 0.5).tobytes()
    assert counts.tolist() == [0, 1, 2, 3, 4]


def test_total_adds_in_order_as_sum_does() -> None:
    terms = [_values(seed, (500,)) for seed in range(6)]
    terms[0][:3] = -0.0
    assert total(terms).tobytes() == sum(terms, np.zeros(())).tobytes()
    margin = _values(7, (500,))
    assert positive_part(margin.copy()).tobytes() == np.maximum(0.0, margin).tobytes()
