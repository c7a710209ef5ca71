"""Which inputs vary over a block of points: what does not is held (and computed) once.

A sweep varies one or two columns; most of a cost formula's inputs then hold
the same value at every point.  ``held_once`` keeps such an array as its first
row, shape (1, ...), and numpy broadcasts it against the arrays that do vary:
every value is the result of the same operations on the same operands as in
the full array (a broadcast of an identical computation is identical), and a
formula whose inputs are all held once is evaluated once for the whole block.

Equal means the same bits (0.0 and -0.0 differ, a NaN equals itself), so
holding a value once never changes a result.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def held_once(values: np.ndarray) -> np.ndarray:
    """``values`` (points on the first axis) as one row when every row holds the same bits."""
    if values.ndim == 0 or values.shape[0] < 2:
        return values
    first = values[:1]
    if values.strides[0] == 0:  # one row read as every point's (``np.broadcast_to``)
        return first
    if values.dtype.itemsize == 8 and not np.array_equal(
        values[-1:].view(np.uint64), first.view(np.uint64)
    ):
        return values  # the last row differs: no need to look at the others
    if values.dtype.itemsize != 8:
        return first.copy() if bool((values == first).all()) else values
    bits = values.view(np.uint64)
    return first.copy() if bool((bits == bits[:1]).all()) else values


def fields_held_once(record: T) -> T:
    """A dataclass of arrays over (points, ...) with each array that does not vary held once."""
    changes = {
        field.name: held_once(value)
        for field in dataclasses.fields(record)  # type: ignore[arg-type]
        if isinstance(value := getattr(record, field.name), np.ndarray) and value.ndim == 2
    }
    return dataclasses.replace(record, **changes)  # type: ignore[type-var]


class SharedColumns:
    """A column form whose number columns are each held once where they do not vary.

    Read like the column form (``columns.api.render_ms`` and so on) by the cost
    formulas, which broadcast; a column is looked at when it is first read.  Its
    ``ObjectColumn`` leaves and ``points`` are the column form's own.
    """

    def __init__(self, section: Any) -> None:
        self._section = section

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._section, name)
        if isinstance(value, np.ndarray):
            value = held_once(value)
        elif dataclasses.is_dataclass(value):
            value = SharedColumns(value)
        setattr(self, name, value)  # read once
        return value
