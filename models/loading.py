"""Load scenarios from presets or TOML files, apply ``--set`` overrides, validate.

A scenario file may say ``extends = "PRESET_OR_FILE"`` and give only the fields
it changes.  The merge rules: tables are merged key by key; a distribution (a
table with ``kind``) and a list (``[[workload.tools]]``) replace the parent's
whole; ``[[append.PATH]]`` tables are added at the end of the parent's list at
PATH (``[[append.workload.tools]]`` adds a tool kind and keeps the preset's).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from models.assignments import parse_assignment, set_path
from models.distribution_kinds import KINDS
from models.errors import ScenarioError
from models.limits import INPUT_SIZE
from models.text_input import parse_toml, read_text

if TYPE_CHECKING:
    from models.scenario import Scenario

_MAX_EXTENDS_DEPTH = 8
PRESETS = Path(__file__).parent / "presets"
"""The shipped presets, files of the package (its package data); read as paths, without
``importlib.resources``, whose import (tempfile and what it loads) the quick commands would
otherwise pay for."""


def preset_names() -> list[str]:
    """Names of the presets shipped in the package."""
    return sorted(p.stem for p in PRESETS.iterdir() if p.suffix == ".toml")


def preset_text(name: str) -> str:
    """The TOML text of a preset, comments included."""
    if name not in preset_names():
        raise ScenarioError(
            f"preset = {name!r}: unknown preset; allowed: {', '.join(preset_names())}"
        )
    return (PRESETS / f"{name}.toml").read_text()


def scenario_text(source: str) -> str:
    """The TOML text of a preset or a scenario file, as written."""
    return _read_source(source)[0]


def raw_scenario(source: str) -> dict[str, Any]:
    """The merged (``extends`` resolved) but unvalidated table of a preset or file.

    Parsed once per process while its files keep their path, modification time and
    size (``_RAW_CACHE``); each call returns a table of its own to change.
    """
    key = (_identity(source), INPUT_SIZE.limit())
    cached = _RAW_CACHE.get(key)
    if cached is not None and all(_stamp(path) == stamp for path, stamp in cached[0]):
        return _copy_table(cached[1])
    read: list[Path] = []
    text, base_dir = _read_source(source, read)
    data = _resolve(text, source, base_dir, chain=(_identity(source),), read=read)
    stamps = tuple((path, _stamp(path)) for path in read)
    if all(stamp is not None and not _racy(stamp) for _, stamp in stamps):
        _RAW_CACHE[key] = (stamps, _copy_table(data))
    return data


_RAW_CACHE: dict[tuple[str, float], tuple[tuple[tuple[Path, Any], ...], dict[str, Any]]] = {}
"""Resolved tables by source: the files read (path, (mtime_ns, size)) and the table."""
_RACY_NS = 2_000_000_000
"""A file changed this recently may change again within one tick of the file system's
clock, keeping its time: it is not cached until it is older."""


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _racy(stamp: tuple[int, int] | None) -> bool:
    return stamp is None or time.time_ns() - stamp[0] < _RACY_NS


def _copy_table(node: Any) -> Any:
    """A copy of a TOML table down to its leaves (which are immutable)."""
    if isinstance(node, dict):
        return {key: _copy_table(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy_table(value) for value in node]
    return node


def raw_scenario_text(text: str, label: str) -> dict[str, Any]:
    """The merged table of a scenario given as text (an upload): it may extend presets only.

    Nothing but the shipped presets is read, so an upload never reaches a file
    of the machine it is uploaded to.
    """
    return _resolve(text, label, None, chain=(label,))


def load_scenario(source: str, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    """Load a preset name or a TOML path, apply ``PATH=VALUE`` overrides, validate.

    An error in a field the overrides did not set names the file it comes from (an empty
    file said only "name: missing")."""
    data = raw_scenario(source)
    paths = []
    for assignment in overrides:
        path, value = parse_assignment(assignment)
        set_path(data, path, value)
        paths.append(path)
    try:
        return validate(data)
    except ScenarioError as error:
        message = str(error)
        if not _is_file(source) or any(_names_path(message, path) for path in paths):
            raise
        raise ScenarioError(f"{source}: {message}") from None


def _names_path(message: str, path: str) -> bool:
    """Whether an error ``message`` is about ``path`` or a field inside it."""
    return message.startswith(path) and message[len(path) : len(path) + 1] in (" ", ".", "[", ":")


def with_changes(scenario: Scenario, overrides: list[str] | tuple[str, ...]) -> Scenario:
    """A validated copy of ``scenario`` with ``PATH=VALUE`` overrides applied."""
    data = scenario.model_dump(mode="json", by_alias=True)
    for assignment in overrides:
        path, value = parse_assignment(assignment)
        set_path(data, path, value)
    return validate(data)


def validate(data: dict[str, Any]) -> Scenario:
    """Validate a scenario table, raising a one-line ScenarioError."""
    # The model (pydantic, numpy) loads here: a source refused while it is read needs neither.
    from pydantic import ValidationError

    from models.scenario import Scenario

    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        from models.validation_errors import one_line

        raise one_line(error, Scenario) from None


def _resolve(
    text: str,
    source: str,
    base_dir: Path | None,
    chain: tuple[str, ...],
    read: list[Path] | None = None,
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
        raise ScenarioError(f"{source}: extends = {parent!r}: must be a preset name or a file path")
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
    parent_text, parent_dir = _read_source(parent_source, read)
    parent_data = _resolve(parent_text, parent_source, parent_dir, (*chain, identity), read)
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


def _read_source(source: str, read: list[Path] | None = None) -> tuple[str, Path | None]:
    """The text of a source and the folder its relative parents are found in; the file
    read is added to ``read`` (a preset's only when it is a file on disk)."""
    if _is_file(source):
        path = Path(source)
        text = read_text(path, "scenario file")
        if read is not None:
            read.append(path.resolve())
        return text, path.parent
    text = preset_text(source)
    if read is not None:
        read.append(PRESETS / f"{source}.toml")
    return text, None


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
