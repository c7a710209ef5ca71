"""The Python API's arguments, checked as the command line checks its options.

Every function of ``sim.api`` passes its arguments through here first, so a
wrong type or value raises ``ScenarioError`` (the command line's one-line
error), never a ``TypeError``, ``AttributeError``, ``IndexError`` or
``RecursionError`` from deep inside, and what the command line refuses (one
rollout of a simulation, ``rollouts=True``) the API refuses too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from models.errors import ScenarioError
from models.limits import MAX_NESTING
from models.numbers import check_value
from models.scenario import Scenario

MIN_ROLLOUTS = 2
"""Fewest rollouts of a simulation: a confidence interval needs two."""


def target_of(value: Any) -> str | Scenario:
    """A spec string (a ``pathlib.Path`` is taken as its text) or a loaded scenario."""
    if isinstance(value, Scenario | str):
        return value
    if isinstance(value, Path):
        return str(value)
    raise ScenarioError(
        f"target = {_shown(value)}: expected a spec such as 'codex-spark:ws', a path or a Scenario"
    )


def path_of(name: str, value: Any) -> Path:
    """A file or directory argument: a string or a ``pathlib.Path``."""
    if isinstance(value, str | Path):
        return Path(value)
    raise ScenarioError(f"{name} = {_shown(value)}: expected a path (a string or a Path)")


def text_or_none(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ScenarioError(f"{name} = {_shown(value)}: expected a string")


def whole(name: str, value: Any, least: int) -> int:
    """An integer (not a boolean) of at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{name} = {_shown(value)}: expected an integer >= {least}")
    check_value(value, name)
    if value < least:
        raise ScenarioError(f"{name} = {value}: must be an integer >= {least}")
    return value


def seed_of(value: Any) -> int | None:
    return None if value is None else whole("seed", value, 0)


def rollouts_of(value: Any, engine: str) -> int:
    """Rollouts of a run: at least 1, and at least 2 for the simulation (a 95% CI)."""
    rollouts = whole("rollouts", value, 1)
    if engine == "des" and rollouts < MIN_ROLLOUTS:
        raise ScenarioError(
            f"rollouts = {rollouts}: the simulation needs at least {MIN_ROLLOUTS} rollouts "
            "for a 95% CI; use engine='analytic' for expected values alone"
        )
    return rollouts


def overrides_of(value: Any) -> Any:
    """``None``, a ``{path: value}`` mapping or a list of ``"PATH=VALUE"`` strings, with
    values nested at most ``MAX_NESTING`` deep and numbers of sane length."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        for path, item in value.items():
            if not isinstance(path, str):
                raise ScenarioError(f"overrides: key {_shown(path)} is not a path string")
            _check_depth(item, f"overrides[{path!r}]", 0)
            check_value(item, f"overrides[{path!r}]")
        return value
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        for item in value:
            if not isinstance(item, str):
                raise ScenarioError(f"overrides: {_shown(item)} is not a PATH=VALUE string")
        return value
    raise ScenarioError(
        f"overrides = {_shown(value)}: give a dict of path -> value or a list of PATH=VALUE"
    )


def slos_of(value: Any) -> dict[str, float]:
    """SLOs as ``{metric: seconds}``: at least one, each a finite number > 0."""
    if not isinstance(value, Mapping) or not value:
        raise ScenarioError("slos: give at least one, e.g. {'ttft_p95_s': 1.0}")
    for metric, limit in value.items():
        number = isinstance(limit, int | float) and not isinstance(limit, bool)
        if not isinstance(metric, str) or not number or not math.isfinite(limit) or limit <= 0:
            raise ScenarioError(
                f"slos: {_shown(metric)}: {_shown(limit)} is not a metric with a finite "
                "limit > 0 in seconds"
            )
    return dict(value)


def _check_depth(value: Any, where: str, depth: int) -> None:
    if depth > MAX_NESTING:
        raise ScenarioError(f"{where}: nested more than {MAX_NESTING} levels deep")
    if isinstance(value, Mapping):
        for item in value.values():
            _check_depth(item, where, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_depth(item, where, depth + 1)


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return "a very large integer"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
