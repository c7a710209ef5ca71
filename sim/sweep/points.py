"""A point of a sweep: the base scenario table with the point's assignments, validated."""

from __future__ import annotations

import copy
import re
from typing import Any

from models.loading import set_path, validate
from models.scenario import Scenario


def point_table(base_raw: dict[str, Any], assignments: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base_raw`` with ``assignments`` (path -> value) set.

    Only the top-level sections the assignments touch are copied, so building a
    point costs little more than validating it.
    """
    data = dict(base_raw)
    for section in {_section(path) for path in assignments}:
        if section in data:
            data[section] = copy.deepcopy(data[section])
    for path, value in assignments.items():
        set_path(data, path, value)
    return data


def point_scenario(
    base_raw: dict[str, Any], assignments: dict[str, Any], seed: int | None = None
) -> Scenario:
    """The validated scenario of one point (with ``seed`` as its root seed, if given)."""
    extra = {"seed": seed} if seed is not None else {}
    return validate(point_table(base_raw, {**assignments, **extra}))


def _section(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]
