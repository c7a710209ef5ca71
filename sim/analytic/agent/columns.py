"""The column form of many scenarios: the scenario tree with arrays over points at its leaves.

It is generated from the tree, one frozen dataclass per section made from the
section's ``model_fields``, so it has exactly the tree's names:

- a number or a switch (``float``, ``int``, ``bool``) becomes a float column
  of shape (points, 1), so a cost formula written for one scenario evaluates
  every point at once by broadcasting, and a switch is a 0/1 number;
- a sub-section becomes that section's column form;
- anything else (a distribution, the tool mix, a name) becomes an
  ``ObjectColumn``: the distinct values and which one each point holds, so
  the engine reduces each distinct distribution once, with its own methods,
  to the moments it needs.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, make_dataclass
from enum import Enum
from functools import cache
from typing import Any, Generic, TypeGuard, TypeVar

import numpy as np
from pydantic import BaseModel

from models.scenario import Scenario

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True)
class ObjectColumn(Generic[T]):
    """A leaf that is not a number: its distinct values, and which one each point holds."""

    values: tuple[T, ...]
    index: np.ndarray
    """Shape (points,): position in ``values`` of each point's value."""
    taken_from: tuple[ObjectColumn[T], slice] | None = field(default=None, compare=False)
    """The column this one was taken from as a run of its values, and the run."""
    _tables: dict[Callable[..., np.ndarray], np.ndarray] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @classmethod
    def of(cls, items: Sequence[T]) -> ObjectColumn[T]:
        """The column of ``items``, equal values stored once (the same object is found fast)."""
        if len(items) == 1 or _all_same(items):
            return cls((items[0],), np.zeros(len(items), dtype=np.intp))
        by_id: dict[int, int] = {}
        by_value: dict[Any, int] = {}
        distinct: list[T] = []
        index = np.empty(len(items), dtype=np.intp)
        for point, item in enumerate(items):
            position = by_id.get(id(item))
            if position is None:
                position = by_value.setdefault(item, len(distinct))
                if position == len(distinct):
                    distinct.append(item)
                by_id[id(item)] = position
            index[point] = position
        return cls(tuple(distinct), index)

    @staticmethod
    def of_numbers(numbers: np.ndarray) -> ObjectColumn[float]:
        """The column of a float array's values, as Python floats, each distinct one once."""
        distinct, index = np.unique(numbers, return_inverse=True)
        return ObjectColumn(tuple(distinct.tolist()), index.reshape(-1))

    @staticmethod
    def zip(*columns: ObjectColumn[Any]) -> ObjectColumn[tuple[Any, ...]]:
        """Each point's values of several columns as one tuple (distinct tuples stored once)."""
        key = np.zeros_like(columns[0].index)
        for column in columns:
            key = key * len(column.values) + column.index
        unique, index = np.unique(key, return_inverse=True)
        values: list[tuple[Any, ...]] = []
        for combined in unique.tolist():
            parts = []
            for column in reversed(columns):
                combined, position = divmod(combined, len(column.values))
                parts.append(column.values[position])
            values.append(tuple(reversed(parts)))
        return ObjectColumn(tuple(values), index.reshape(-1))

    @property
    def points(self) -> int:
        return int(self.index.size)

    def take(self, rows: np.ndarray) -> ObjectColumn[T]:
        """The column of the points ``rows`` only, holding only the values they hold (what
        is evaluated once per distinct value is then evaluated for those alone)."""
        if len(self.values) == 1:  # most of a sweep's columns: nothing to find
            return ObjectColumn(self.values, np.zeros_like(self.index[rows]), (self, slice(0, 1)))
        held, index = np.unique(self.index[rows], return_inverse=True)
        if held.size and int(held[-1]) - int(held[0]) + 1 == held.size:
            # A run of values, as a block of a sweep's points holds: one slice.
            run = slice(int(held[0]), int(held[-1]) + 1)
            return ObjectColumn(self.values[run], index.reshape(-1), (self, run))
        return ObjectColumn(tuple([self.values[i] for i in held.tolist()]), index.reshape(-1))

    def table(self, function: Callable[[ObjectColumn[T]], np.ndarray]) -> np.ndarray:
        """``function(self)``, an array with a row per distinct value, computed once per
        column: a column taken from another as a run of its values (a block of a sweep's
        points) takes its rows of the other's table, so a column form's values are read once
        whichever block and transport asks."""
        found = self._tables.get(function)
        if found is None:
            if self.taken_from is None:
                found = function(self)
            else:
                whole, run = self.taken_from
                found = whole.table(function)[run]
            self._tables[function] = found
        return found

    def groups(self) -> Iterator[tuple[T, np.ndarray]]:
        """Each distinct value with the points that hold it."""
        order = np.argsort(self.index, kind="stable")
        counts = np.bincount(self.index, minlength=len(self.values))
        bounds = np.concatenate([[0], np.cumsum(counts)])
        for position, value in enumerate(self.values):
            if counts[position]:
                yield value, order[bounds[position] : bounds[position + 1]]

    def convert(self, function: Callable[[T], U]) -> ObjectColumn[U]:
        """``function`` of each distinct value, held by the same points."""
        return ObjectColumn(tuple(function(value) for value in self.values), self.index)

    def map(self, function: Callable[[T], Any]) -> np.ndarray:
        """``function`` of each point's value, evaluated once per distinct value.

        Shape (points, *shape of the result).
        """
        return np.asarray([function(value) for value in self.values], dtype=float)[self.index]

    def map_with(self, function: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
        """``function(value, *rows)`` for each distinct value, given the rows of ``arrays``
        (points on their first axis) of the points that hold it, stitched back in point order.

        An array of one row (a column held once, ``sim.analytic.agent.varying``) is given
        whole to every value, and a result of one row is every one of its points'.
        """
        out: np.ndarray | None = None
        for value, rows in self.groups():
            given = (a if np.shape(a)[0] == 1 else np.asarray(a)[rows] for a in arrays)
            part = np.asarray(function(value, *given))
            if out is None:
                out = np.empty((self.points, *part.shape[1:]))
            out[rows] = part
        assert out is not None, "a column has at least one point"
        return out


class _Leaf(Enum):
    NUMBER = "number"
    SECTION = "section"
    OBJECT = "object"


def _is_section(annotation: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _leaf(annotation: Any) -> _Leaf:
    if annotation in (float, int, bool):
        return _Leaf.NUMBER
    if _is_section(annotation):
        return _Leaf.SECTION
    return _Leaf.OBJECT


@cache
def column_class(section: type[BaseModel]) -> type:
    """The column form's class of ``section``: its fields, as columns, plus ``points``."""
    fields: list[tuple[str, Any]] = [("points", int)]
    for name, info in section.model_fields.items():
        annotation = info.annotation
        if _leaf(annotation) is _Leaf.NUMBER:
            fields.append((name, np.ndarray))
        elif _is_section(annotation):
            fields.append((name, column_class(annotation)))
        else:
            fields.append((name, ObjectColumn))
    return make_dataclass(
        f"{section.__name__}Columns",
        fields,
        frozen=True,
        namespace={
            "__doc__": f"``{section.__name__}`` over points (``sim.analytic.agent.columns``)."
        },
    )


@cache
def _layout(section: type[BaseModel]) -> tuple[tuple[str, ...], tuple[tuple[str, _Leaf, Any], ...]]:
    """The section's number fields, and its other fields with their kind and type."""
    numbers = tuple(
        n for n, i in section.model_fields.items() if _leaf(i.annotation) is _Leaf.NUMBER
    )
    others = tuple(
        (name, _leaf(info.annotation), info.annotation)
        for name, info in section.model_fields.items()
        if name not in numbers
    )
    return numbers, others


ScenarioColumns = column_class(Scenario)
"""The column form's class of a whole scenario."""


def column_form(scenarios: Sequence[Scenario]) -> Any:
    """The column form of ``scenarios`` (a ``ScenarioColumns``)."""
    if not scenarios:
        raise ValueError("a column form needs at least one scenario")
    return _columns(Scenario, list(scenarios))


def take_points(columns: Any, rows: np.ndarray) -> Any:
    """The column form of the points ``rows`` only (a run of consecutive points, as a block
    of a sweep is, takes each number column as a view)."""
    run = rows.size > 0 and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size))
    return _take(columns, rows, slice(int(rows[0]), int(rows[0]) + rows.size) if run else rows)


def _take(columns: Any, rows: np.ndarray, numbers: np.ndarray | slice) -> Any:
    values: dict[str, Any] = {}
    for leaf in dataclasses.fields(columns):
        value = getattr(columns, leaf.name)
        if leaf.name == "points":
            values[leaf.name] = int(rows.size)
        elif isinstance(value, np.ndarray):
            values[leaf.name] = value[numbers]
        elif isinstance(value, ObjectColumn):
            values[leaf.name] = value.take(rows)
        else:
            values[leaf.name] = _take(value, rows, numbers)
    return type(columns)(**values)


def _columns(section: type[BaseModel], items: list[Any]) -> Any:
    # Points often share a section object (a sweep's points share the base's untouched
    # sections): read each distinct object once and spread it to its points.
    first = items[0]
    if len(items) > 1 and _all_same(items):
        return take_points(_distinct_columns(section, [first]), np.zeros(len(items), np.intp))
    ids = list(map(id, items))
    if len(set(ids)) < len(items):
        position: dict[int, int] = {}
        index = [position.setdefault(i, len(position)) for i in ids]
        distinct = list({id(item): item for item in items}.values())
        return take_points(_distinct_columns(section, distinct), np.asarray(index, dtype=np.intp))
    return _distinct_columns(section, items)


def _all_same(items: Sequence[Any]) -> bool:
    """Whether every item is the first item's object."""
    return all(map(operator.is_, items, itertools.repeat(items[0])))


def _distinct_columns(section: type[BaseModel], items: list[Any]) -> Any:
    numbers, others = _layout(section)
    values: dict[str, Any] = {}
    if numbers:
        # All of a section's numbers in one array, one contiguous row per field (read a
        # point at a time, each point's numbers at once).
        read = operator.attrgetter(*numbers)
        if len(numbers) == 1:
            rows = np.array([list(map(read, items))], dtype=float)
        else:
            rows = np.ascontiguousarray(np.array(list(map(read, items)), dtype=float).T)
        values = {name: rows[i][:, None] for i, name in enumerate(numbers)}
    for name, kind, annotation in others:
        leaves = list(map(operator.attrgetter(name), items))
        if kind is _Leaf.SECTION:
            values[name] = _columns(annotation, leaves)
        else:
            values[name] = ObjectColumn.of(leaves)
    return column_class(section)(points=len(items), **values)
