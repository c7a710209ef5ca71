"""Load points as a user writes them (a comma-separated list of positive numbers), and the
scenarios of a fleet at each."""

from __future__ import annotations

import math
from typing import TypeVar

from models.errors import ScenarioError
from models.loading import with_changes
from models.scenario import Scenario

Number = TypeVar("Number", int, float)


def parse_points(option: str, text: str, kind: type[Number]) -> list[Number]:
    """A comma-separated list of positive, finite numbers, e.g. ``1,10,100``; no empty item."""
    try:
        values = [kind(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or any(not (value > 0 and math.isfinite(value)) for value in values):
        what = "integers >= 1" if kind is int else "finite numbers > 0"
        raise ScenarioError(f"{option} = {text!r}: expected a comma-separated list of {what}")
    return values


def load_scenarios(
    scenario: Scenario, agents: list[int] | None = None, rates: list[float] | None = None
) -> list[Scenario]:
    """``scenario`` under closed populations of ``agents`` or open arrivals at ``rates``
    (rollouts per second): exactly one of the two."""
    if agents is not None and rates is None:
        return [with_changes(scenario, ['load.kind="closed"', f"load.agents={n}"]) for n in agents]
    if rates is not None and agents is None:
        return [
            with_changes(scenario, ['load.kind="open"', f"load.rollouts_per_s={rate!r}"])
            for rate in rates
        ]
    raise ScenarioError("load points: give exactly one of --agents or --rates")
