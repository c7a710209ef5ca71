"""Overrides as a notebook writes them, a ``{path: value}`` mapping, turned into ``--set``'s
``PATH=VALUE`` assignments (so a result records them exactly as the command line does)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import tomli_w

from models.errors import ScenarioError

Overrides = Mapping[str, Any] | Sequence[str] | None
"""``{"network.rtt_ms": 90}``, ``["network.rtt_ms=90"]`` or None."""


def assignments(overrides: Overrides) -> list[str]:
    """``PATH=VALUE`` strings, values written as TOML (tables inline)."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        raise ScenarioError(f"overrides = {overrides!r}: give a list of PATH=VALUE or a dict")
    if isinstance(overrides, Mapping):
        return [f"{path}={toml_value(value)}" for path, value in overrides.items()]
    return list(overrides)


def toml_value(value: Any) -> str:
    """One TOML value, as ``--set`` reads it (tables and arrays inline)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key} = {toml_value(v)}" for key, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")
