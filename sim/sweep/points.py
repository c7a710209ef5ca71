"""A point of a sweep: the base scenario table with the point's assignments, validated."""

from __future__ import annotations

import re
from typing import Any

from models.loading import set_path, validate
from models.scenario import Scenario


def point_table(base_raw: dict[str, Any], assignments: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base_raw`` with ``assignments`` (path -> value) set.

    Only the tables and lists along each assigned path are copied (the rest is
    shared with ``base_raw``, which is never modified), so building a point
    costs little next to validating it.  ``set_path`` reports bad paths.
    """
    data = dict(base_raw)
    for path, value in assignments.items():
        node: Any = data
        for key in _keys(path)[:-1]:
            child = _child(node, key)
            if not isinstance(child, dict | list):
                break
            copied = dict(child) if isinstance(child, dict) else list(child)
            node[key] = copied
            node = copied
        set_path(data, path, value)
    return data


def point_scenario(
    base_raw: dict[str, Any], assignments: dict[str, Any], seed: int | None = None
) -> Scenario:
    """The validated scenario of one point (with ``seed`` as its root seed, if given)."""
    extra = {"seed": seed} if seed is not None else {}
    return validate(point_table(base_raw, {**assignments, **extra}))


def _keys(path: str) -> list[str | int]:
    """``workload.tools[0].weight`` -> ["workload", "tools", 0, "weight"], as set_path reads it."""
    return [int(p) if p.isdigit() else p for p in re.sub(r"\[(\d+)\]", r".\1", path).split(".")]


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    return None
