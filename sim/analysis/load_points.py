"""Load points as a user writes them (a comma-separated list of positive numbers, or a list
from the Python API), and the scenarios of a fleet at each.

Every front end (``load``, the dashboard's load view, ``api.load_curve``) passes
``load_scenarios``, so the checks here hold for all: at most ``MAX_LOAD_POINTS``
points, counted before any scenario is built (20,000 points took 1.3 GB), none
empty, agents whole numbers and rates finite.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

from models.errors import ScenarioError
from models.loading import with_changes
from models.scenario import Scenario

Number = TypeVar("Number", int, float)
MAX_LOAD_POINTS = 1_000
"""Most load points of one curve: each is a scenario of its own (about 65 KB) and a fleet
run; a curve has no use for more points than a plot has pixels."""


def parse_points(option: str, text: str, kind: type[Number]) -> list[Number]:
    """A comma-separated list of positive, finite numbers, e.g. ``1,10,100``; no empty item."""
    items = text.split(",")
    _check_count(option, len(items))
    try:
        values = [kind(part) for part in items]
    except ValueError:
        values = []
    if not values or any(not (value > 0 and math.isfinite(value)) for value in values):
        what = "integers >= 1" if kind is int else "finite numbers > 0"
        raise ScenarioError(f"{option} = {_shown(text)}: expected a comma-separated list of {what}")
    return values


def load_scenarios(
    scenario: Scenario, agents: list[int] | None = None, rates: list[float] | None = None
) -> list[Scenario]:
    """``scenario`` under closed populations of ``agents`` or open arrivals at ``rates``
    (rollouts per second): exactly one of the two, each a non-empty list."""
    if (agents is None) == (rates is None):
        raise ScenarioError("load points: give exactly one of --agents or --rates")
    if agents is not None:
        counts = _checked("agents", agents, whole=True)
        return [with_changes(scenario, ['load.kind="closed"', f"load.agents={n}"]) for n in counts]
    return [
        with_changes(scenario, ['load.kind="open"', f"load.rollouts_per_s={rate!r}"])
        for rate in _checked("rates", rates, whole=False)
    ]


def _checked(name: str, values: Any, whole: bool) -> list[Any]:
    """``values`` as a list of load points: whole numbers >= 1, or finite numbers > 0."""
    what = "integers >= 1" if whole else "finite numbers > 0"
    if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
        raise ScenarioError(f"{name} = {_shown(values)}: expected a list of {what}")
    _check_count(name, len(values))
    if not values:
        raise ScenarioError(f"{name} = []: expected at least one load point ({what})")
    for value in values:
        number = isinstance(value, int) if whole else isinstance(value, int | float)
        if isinstance(value, bool) or not number or not (value > 0 and math.isfinite(value)):
            raise ScenarioError(f"{name}: {_shown(value)} is not one of the {what}")
    return list(values)


def _check_count(name: str, count: int) -> None:
    if count > MAX_LOAD_POINTS:
        raise ScenarioError(f"{name}: {count:,} load points; at most {MAX_LOAD_POINTS:,}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
