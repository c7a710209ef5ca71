"""What the command line writes: JSON that is always valid, and files checked before a run."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from models.errors import ScenarioError


def json_text(payload: dict[str, Any]) -> str:
    """``payload`` as indented JSON; a NaN or an infinity is a one-line error naming its key."""
    where = _non_finite(payload, "")
    if where is not None:
        path, value = where
        raise ScenarioError(
            f"result {path} = {value}: not a finite number; an input drives a duration "
            "or a rate out of range"
        )
    return json.dumps(payload, indent=2, allow_nan=False)


def check_writable(path: Path, option: str) -> None:
    """Refuse an output file that could not be written, before any work is done: a
    directory, a special file (a FIFO would block the write until read, a device or a
    socket is no file), a missing directory, no permission."""
    parent = path.parent
    if path.is_dir():
        raise ScenarioError(f"{option} {path}: is a directory; give a file path")
    if path.exists() and not path.is_file():
        raise ScenarioError(
            f"{option} {path}: is a {_special_kind(path)}, not a regular file; give a file path"
        )
    if not parent.is_dir():
        raise ScenarioError(f"{option} {path}: no such directory {str(parent)!r}")
    writable = os.access(path, os.W_OK) if path.exists() else os.access(parent, os.W_OK | os.X_OK)
    if not writable:
        raise ScenarioError(f"{option} {path}: not writable")


def check_distinct(outputs: list[tuple[str, Path]]) -> None:
    """Refuse two outputs that name one file: the second would overwrite the first."""
    seen: dict[Path, str] = {}
    for option, path in outputs:
        resolved = path.resolve()
        if resolved in seen:
            raise ScenarioError(
                f"{seen[resolved]} and {option} both write {path}: the second would overwrite "
                "the first; give each its own file"
            )
        seen[resolved] = option


def _special_kind(path: Path) -> str:
    if path.is_fifo():
        return "FIFO (named pipe)"
    if path.is_socket():
        return "socket"
    if path.is_block_device() or path.is_char_device():
        return "device"
    return "special file"


def write_output(path: Path, option: str, write: Any) -> Any:
    """``write(path)``; an I/O failure (a full disk, no permission) is one line, and what
    was printed before stays."""
    try:
        return write(path)
    except OSError as error:
        reason = error.strerror or (str(error).splitlines() or ["an I/O error"])[0]
        raise ScenarioError(f"{option} {path}: cannot be written ({reason})") from None


def _non_finite(value: Any, path: str) -> tuple[str, float] | None:
    if isinstance(value, float) and not math.isfinite(value):
        return path or "value", value
    if isinstance(value, dict):
        items = ((f"{path}.{key}" if path else str(key), item) for key, item in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    else:
        return None
    for item_path, item in items:
        found = _non_finite(item, item_path)
        if found is not None:
            return found
    return None
