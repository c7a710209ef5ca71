"""Inputs that do not vary over a block are held once, with the same bits.

``sim.analytic.agent.varying`` keeps a column every point holds alike as one
row, and the engine's cost formulas broadcast it.  A point's results must not
depend on which other points share its block: a sweep that varies one column,
and one that varies every number of the scenario, give each point the bits it
has alone.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from models.errors import ScenarioError
from models.loading import load_scenario, raw_scenario
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect_columns
from sim.analytic.agent.varying import SharedColumns, fields_held_once, held_once
from sim.sweep.points import point_scenario
from sim.turn.transports import Transport

POINTS = 5


def _float_paths(section: BaseModel, prefix: str = "") -> dict[str, float]:
    """Every float of the scenario's sections by its dotted path (switches, counts and
    distributions left out)."""
    found: dict[str, float] = {}
    for name, info in type(section).model_fields.items():
        value = getattr(section, name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            found |= _float_paths(value, f"{prefix}{name}.")
        elif type(value) is float:
            found[f"{prefix}{name}"] = value
    return found


def _direction(base: dict[str, Any], path: str, value: float) -> float:
    """+1 where the scenario takes the number a little larger, else -1 (a probability of 1,
    a lower bound)."""
    try:
        point_scenario(base, {path: value * (1.0 + 0.03 * (POINTS - 1))})
    except ScenarioError:
        return -1.0
    return 1.0


def _sweep(every_column: bool) -> list[Any]:
    base = raw_scenario("codex-spark")
    floats = _float_paths(load_scenario("codex-spark")) if every_column else {}
    directions = {path: _direction(base, path, value) for path, value in floats.items()}
    points = []
    for point in range(POINTS):
        # Each number a little different at each point (a zero stays zero: the same code
        # paths), the decode rate over a wide range.
        assignments = {
            path: value * (1.0 + directions[path] * 0.03 * point) for path, value in floats.items()
        }
        assignments["inference.decode_tps"] = 30.0 * 4.0**point
        points.append(point_scenario(base, assignments))
    return points


@pytest.mark.parametrize("every_column", [False, True])
@pytest.mark.parametrize("transport", list(Transport))
def test_a_sweep_gives_each_point_its_bits_alone(every_column: bool, transport) -> None:
    scenarios = _sweep(every_column)
    together = expect_columns(column_form(scenarios), transport)
    assert together.stage_s.shape[0] == POINTS
    for point, scenario in enumerate(scenarios):
        alone = expect_columns(column_form([scenario]), transport)
        assert together.approximations[point] == alone.approximations[0]
        for field in dataclasses.fields(alone):
            if field.name != "approximations":
                np.testing.assert_array_equal(
                    getattr(together, field.name)[point], getattr(alone, field.name)[0]
                )


def test_every_number_varies_in_the_wide_sweep() -> None:
    columns = SharedColumns(column_form(_sweep(every_column=True)))
    assert columns.network.rtt_ms.shape == (POINTS, 1)
    assert columns.api.route_ms.shape == (POINTS, 1)


def test_held_once_only_where_every_bit_agrees() -> None:
    assert held_once(np.array([[1.5, 2.0], [1.5, 2.0]])).shape == (1, 2)
    assert held_once(np.array([[0.0], [-0.0]])).shape == (2, 1)
    assert held_once(np.array([[np.nan], [np.nan]])).shape == (1, 1)
    assert held_once(np.array([[1.0], [2.0]])).shape == (2, 1)
    one = np.array([[3.0]])
    assert held_once(one) is one


def test_fields_held_once_keeps_what_varies() -> None:
    @dataclasses.dataclass(frozen=True)
    class Pair:
        same: np.ndarray
        different: np.ndarray
        flat: np.ndarray

    pair = fields_held_once(Pair(np.ones((3, 2)), np.arange(6.0).reshape(3, 2), np.ones(3)))
    assert pair.same.shape == (1, 2)
    assert pair.different.shape == (3, 2)
    assert pair.flat.shape == (3,)
