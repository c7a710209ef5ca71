"""Load scenarios from presets or TOML files, apply ``--set`` overrides, validate.

A scenario file may say ``extends = "PRESET_OR_FILE"`` and give only the fields
it changes.  The merge rules: tables are merged key by key; a distribution (a
table with ``kind``) and a list (``[[workload.tools]]``) replace the parent's
whole; ``[[append.PATH]]`` tables are added at the end of the parent's list at
PATH (``[[append.workload.tools]]`` adds a tool kind and keeps the preset's).
"""

from __future__ import annotations

import re
import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from models.distributions import KINDS
from models.errors import ScenarioError, one_line
from models.scenario import Scenario
from models.text_input import check_nesting, parse_toml, read_text

_MAX_EXTENDS_DEPTH = 8


def preset_names() -> list[str]:
    """Names of the presets shipped in the package."""
    folder = files("models.presets")
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def preset_text(name: str) -> str:
    """The TOML text of a preset, comments included."""
    if name not in preset_names():
        raise ScenarioError(
            f"preset = {name!r}: unknown preset; allowed: {', '.join(preset_names())}"
        )
    return files("models.presets").joinpath(f"{name}.toml").read_text()


def scenario_text(source: str) -> str:
    """The TOML text of a preset or a scenario file, as written."""
    return _read_source(source)[0]


def raw_scenario(source: str) -> dict[str, Any]:
    """The merged (``extends`` resolved) but unvalidated table of a preset or file."""
    text, base_dir = _read_source(source)
    return _resolve(text, source, base_dir, chain=(_identity(source),))


def raw_scenario_text(text: str, label: str) -> dict[str, Any]:
    """The merged table of a scenario given as text (an upload): it may extend presets only.

    Nothing but the shipped presets is read, so an upload never reaches a file
    of the machine it is uploaded to.
    """
    return _resolve(text, label, None, chain=(label,))


def load_scenario(source: str, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    """Load a preset name or a TOML path, apply ``PATH=VALUE`` overrides, validate."""
    data = raw_scenario(source)
    for assignment in overrides:
        path, value = parse_assignment(assignment)
        set_path(data, path, value)
    return validate(data)


def with_changes(scenario: Scenario, overrides: list[str] | tuple[str, ...]) -> Scenario:
    """A validated copy of ``scenario`` with ``PATH=VALUE`` overrides applied."""
    data = scenario.model_dump(mode="json", by_alias=True)
    for assignment in overrides:
        path, value = parse_assignment(assignment)
        set_path(data, path, value)
    return validate(data)


def validate(data: dict[str, Any]) -> Scenario:
    """Validate a scenario table, raising a one-line ScenarioError."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise one_line(error, Scenario) from None


def parse_assignment(assignment: str) -> tuple[str, Any]:
    """Split ``dotted.path=value``; the value is read as a TOML value, else as a string."""
    path, sep, text = assignment.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ScenarioError(f"--set {assignment!r}: expected PATH=VALUE, e.g. network.rtt_ms=40")
    check_nesting(text, f"--set {path}")
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = text.strip()
    return path, value


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``value`` at a dotted path (``workload.tools[0].weight``); no new sections."""
    keys = [_key(part) for part in _INDEX.sub(r".\1", path).split(".")]
    node: Any = data
    for depth, key in enumerate(keys):
        where = ".".join(map(str, keys[: depth + 1]))
        last = depth == len(keys) - 1
        if isinstance(node, list):
            if not isinstance(key, int) or not 0 <= key < len(node):
                raise ScenarioError(f"--set {path}: {where}: index outside 0..{len(node) - 1}")
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
            raise ScenarioError(f"--set {path}: {where} is not inside a section of the scenario")


_INDEX = re.compile(r"\[(\d+)\]")


def _key(part: str) -> str | int:
    return int(part) if part.isdigit() else part


def _resolve(
    text: str, source: str, base_dir: Path | None, chain: tuple[str, ...]
) -> dict[str, Any]:
    """The table of ``text`` (read from ``source``) with its ``extends`` chain merged in.

    ``base_dir`` is where relative parent files are found; None allows presets only.
    ``chain`` names the sources being resolved, so a cycle is reported as one.
    """
    data = parse_toml(text, source)
    parent = data.pop("extends", None)
    appended = data.pop(APPEND, None)
    if parent is None:
        if appended is not None:
            raise ScenarioError(f"{source}: [{APPEND}]: needs extends = PRESET_OR_FILE")
        return data
    if not isinstance(parent, str) or not parent:
        raise ScenarioError(f"extends = {parent!r}: must be a preset name or a file path")
    if base_dir is None:
        if _is_file(parent):
            raise ScenarioError(
                f"extends = {parent!r}: {source} is not a file of this machine, so it may "
                f"extend a preset only; allowed: {', '.join(preset_names())}"
            )
        parent_source = parent
    else:
        parent_source = str(base_dir / parent) if _is_file(parent) else parent
    identity = _identity(parent_source)
    if identity in chain:
        cycle = " -> ".join([*chain, identity])
        raise ScenarioError(f"extends = {parent!r}: a cycle ({cycle})")
    if len(chain) > _MAX_EXTENDS_DEPTH:
        raise ScenarioError(f"extends = {parent!r}: chain longer than {_MAX_EXTENDS_DEPTH}")
    parent_text, parent_dir = _read_source(parent_source)
    parent_data = _resolve(parent_text, parent_source, parent_dir, (*chain, identity))
    merged = _merge(parent_data, data)
    _append(merged, appended or {}, APPEND)
    return merged


APPEND = "append"
"""The table of lists a scenario file adds to its parent's (``[[append.workload.tools]]``)."""


def _append(node: dict[str, Any], additions: Any, where: str) -> None:
    """Extend the lists of ``node`` with the lists at the same paths in ``additions``."""
    if not isinstance(additions, dict):
        raise ScenarioError(f"{where}: expected tables ending in a list, e.g. [[{where}.x]]")
    for key, value in additions.items():
        path = f"{where}.{key}"
        target = node.get(key)
        if isinstance(value, list) and isinstance(target, list):
            node[key] = [*target, *value]
        elif isinstance(value, dict) and isinstance(target, dict):
            _append(target, value, path)
        else:
            raise ScenarioError(
                f"{path}: the parent has no list at {path.removeprefix(APPEND + '.')}"
            )


def _is_file(source: str) -> bool:
    return source.endswith(".toml") or "/" in source


def _identity(source: str) -> str:
    """What a source stands for: a preset's name, or a file's resolved path."""
    return str(Path(source).resolve()) if _is_file(source) else source


def _read_source(source: str) -> tuple[str, Path | None]:
    if _is_file(source):
        path = Path(source)
        return read_text(path, "scenario file"), path.parent
    return preset_text(source), None


def _merge(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in change.items():
        # A distribution is replaced whole; a section is merged key by key.
        is_distribution = isinstance(value, dict) and value.get("kind") in KINDS
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and not is_distribution:
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
