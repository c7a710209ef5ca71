"""``--set PATH=VALUE``: an assignment read, and set at its dotted path in a scenario table.

Paths name fields and list indices (``workload.tools[0].weight``); a path never creates a
section, and a bad one is a one-line ``ScenarioError`` naming the path."""

from __future__ import annotations

import functools
import re
import tomllib
from typing import Any

from models.errors import ScenarioError
from models.numbers import MAX_NUMBER_DIGITS, shown
from models.text_input import check_text


def parse_assignment(assignment: str, option: str = "--set") -> tuple[str, Any]:
    """Split ``dotted.path=value`` (given with ``option``); the value is read as a TOML value,
    else as a string."""
    path, sep, text = assignment.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ScenarioError(
            f"{option} {shown(assignment)!r}: expected PATH=VALUE, e.g. network.rtt_ms=40"
        )
    check_text(text, f"{option} {shown(path)}")
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = text.strip()
    return path, value


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at a dotted path (``workload.tools[0].weight``); no new sections."""
    if len(path) > MAX_PATH_CHARS:
        raise ScenarioError(
            f"--set {shown(path)}: a path of {len(path):,} characters; at most {MAX_PATH_CHARS}"
        )
    keys = _path_keys(path)
    node: Any = data
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        if isinstance(node, list):
            if not isinstance(key, int) or not 0 <= key < len(node):
                raise ScenarioError(
                    f"--set {shown(path)}: {_where(keys, depth)}: index outside 0..{len(node) - 1}"
                )
            if last:
                node[key] = value
            else:
                node = node[key]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.get(key)
        else:
            raise ScenarioError(
                f"--set {shown(path)}: {_where(keys, depth)} is not inside a section of the "
                "scenario"
            )


def _where(keys: tuple[str | int, ...], depth: int) -> str:
    """The path down to ``keys[depth]``, as an error names it."""
    return shown(".".join(map(str, keys[: depth + 1])))


_INDEX = re.compile(r"\[(\d+)\]")
MAX_PATH_CHARS = 200
"""Longest ``--set`` path (the deepest field's path is under 60 characters)."""


@functools.lru_cache(maxsize=1024)
def _path_keys(path: str) -> tuple[str | int, ...]:
    """``workload.tools[0].weight`` -> ("workload", "tools", 0, "weight") (a sweep sets the
    same few paths on every point)."""
    return tuple(_key(part) for part in _INDEX.sub(r".\1", path).split("."))


def _key(part: str) -> str | int:
    """A path's part: a list index (a whole number, of sane length) or a field name."""
    return int(part) if part.isdigit() and len(part) <= MAX_NUMBER_DIGITS else part
