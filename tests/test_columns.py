"""The column form: generated from the scenario tree, numbers as (points, 1) columns,
switches as 0/1, everything else stored once per distinct value."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from pydantic import BaseModel

from models.distributions import Constant, LogNormal
from models.loading import load_scenario
from models.scenario import Scenario
from sim.analytic.agent.columns import ObjectColumn, column_class, column_form


def scenarios() -> list[Scenario]:
    return [
        load_scenario("codex-spark", ["network.rtt_ms=10", "connection.store=false"]),
        load_scenario("gpt5-flagship"),
        load_scenario("codex-spark", ["network.rtt_ms=90", "inference.decode_tps=250"]),
    ]


def test_every_field_of_the_tree_has_a_column_of_the_same_name() -> None:
    def check(section: type[BaseModel]) -> None:
        names = [f.name for f in dataclasses.fields(column_class(section))]
        assert names == ["points", *section.model_fields]
        for info in section.model_fields.values():
            if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
                check(info.annotation)

    check(Scenario)


def test_numbers_and_switches_are_float_columns_over_points() -> None:
    points = scenarios()
    columns = column_form(points)
    assert columns.points == 3 and columns.network.points == 3
    np.testing.assert_array_equal(columns.network.rtt_ms, [[10.0], [30.0], [90.0]])
    np.testing.assert_array_equal(columns.connection.store, [[0.0], [1.0], [1.0]])
    assert columns.connection.store.dtype == float
    np.testing.assert_array_equal(
        columns.workload.output_items_per_turn, [[s.workload.output_items_per_turn] for s in points]
    )
    np.testing.assert_array_equal(
        columns.inference.prefill_tps, [[s.inference.prefill_tps] for s in points]
    )


def test_distributions_and_names_are_stored_once_per_distinct_value() -> None:
    points = scenarios()
    columns = column_form(points)
    decode = columns.inference.decode_tps
    assert len(decode.values) == 3 and decode.values[2] == Constant(value=250.0)
    assert [decode.values[i] for i in decode.index] == [s.inference.decode_tps for s in points]
    tools = columns.workload.tools
    assert len(tools.values) == 1, "all presets share the tool mix"
    assert np.array_equal(tools.index, [0, 0, 0])
    assert [columns.name.values[i] for i in columns.name.index] == [s.name for s in points]


def test_object_column_reductions() -> None:
    a, b = LogNormal(median=2.0, sigma=0.5), Constant(value=3.0)
    column = ObjectColumn.of([a, b, LogNormal(median=2.0, sigma=0.5), b])
    assert column.values == (a, b) and list(column.index) == [0, 1, 0, 1]
    np.testing.assert_allclose(column.map(lambda d: d.mean), [a.mean, 3.0, a.mean, 3.0])
    k = np.array([[0.0], [1.0], [2.0], [4.0]])
    expected = [float(d.partial_expectation(x)) for d, x in zip([a, b, a, b], k[:, 0], strict=True)]
    np.testing.assert_array_equal(
        column.map_with(lambda d, x: d.partial_expectation(x), k)[:, 0], expected
    )
    assert list(column.take(np.array([3, 2])).index) == [1, 0]
    pairs = ObjectColumn.zip(column, ObjectColumn.of(["x", "y", "y", "y"]))
    assert [pairs.values[i] for i in pairs.index] == [(a, "x"), (b, "y"), (a, "y"), (b, "y")]
    assert len(pairs.values) == 3


def test_an_empty_column_form_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one scenario"):
        column_form([])


def test_a_taken_column_holds_each_point_its_own_value_whatever_the_rows() -> None:
    laws = [Constant(value=float(v)) for v in range(6)]
    column = ObjectColumn(tuple(laws), np.array([0, 1, 2, 3, 4, 5, 2, 0]))
    for rows in ([2, 3, 4], [6, 2, 3], [0, 5], [7, 0], [4]):
        taken = column.take(np.array(rows))
        assert [taken.values[i] for i in taken.index] == [
            column.values[column.index[r]] for r in rows
        ]
        assert len(set(taken.values)) == len(taken.values), "each value held once"
    run = column.take(np.array([2, 3, 4]))
    assert run.values == tuple(laws[2:5]), "a run of values is a slice of them"
    single = ObjectColumn.of([laws[1]] * 4).take(np.array([3, 1]))
    assert single.values == (laws[1],) and list(single.index) == [0, 0]


def test_a_values_table_is_computed_once_and_a_block_takes_its_rows() -> None:
    calls = []

    def doubled(column: ObjectColumn[Constant]) -> np.ndarray:
        calls.append(len(column.values))
        return np.array([2.0 * law.value for law in column.values])

    laws = [Constant(value=float(v)) for v in range(6)]
    whole = ObjectColumn.of(laws)
    block = whole.take(np.arange(2, 5))
    np.testing.assert_array_equal(block.table(doubled), [4.0, 6.0, 8.0])
    np.testing.assert_array_equal(whole.table(doubled), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])
    np.testing.assert_array_equal(whole.take(np.arange(4, 6)).table(doubled), [8.0, 10.0])
    assert calls == [6]  # the whole column's values, read once
    scattered = whole.take(np.array([5, 0]))
    np.testing.assert_array_equal(scattered.table(doubled), [0.0, 10.0])
    assert calls == [6, 2]  # not a run: its own values
