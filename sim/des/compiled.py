"""The event loop's compiled modules (Cython), used only where they match their sources.

The queue (``kernel``), the pools, the side join and a fleet's turn run a fleet
replication's every event.  ``setup.py`` compiles them: ``pools`` and ``side_join``
from their own ``.py`` (the ``.pxd`` beside each types it), ``kernel`` and
``fleet_turn`` from a ``.pyx`` twin of their ``.py`` (a heap of C structs, typed
reads of a turn's arrays).  The build writes ``compiled.json`` beside the modules: the
SHA-256 of every source and of every module it built.

At import (``sim.des``'s ``__init__``), the compiled modules are used when that record
matches: the same sources, the same built files.  Otherwise the ``.py`` modules are
imported in their place: silently when none was built (no compiler) or when
``LOOPBUDGET_PURE_PYTHON`` is set, with a one-line warning when they are stale (a source
edited after the build), so an edit is never shadowed by the module built before it.
Both give the same records bit for bit (``tests/test_compiled.py``).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from pathlib import Path
from types import ModuleType

MODULES = ("kernel", "pools", "side_join", "fleet_turn")
"""The compiled modules of ``sim.des``."""
SOURCES = (
    "kernel.pyx",
    "kernel.pxd",
    "kernel.py",
    "pools.py",
    "pools.pxd",
    "side_join.py",
    "side_join.pxd",
    "fleet_turn.pyx",
    "fleet_turn.py",
)
"""What they are built from (a ``.py`` with a ``.pyx`` twin is its reference)."""
RECORD = "compiled.json"
PURE_PYTHON_VARIABLE = "LOOPBUDGET_PURE_PYTHON"
HERE = Path(__file__).parent


def sources_sha256(directory: Path) -> dict[str, str]:
    """The SHA-256 of each source in ``directory`` (a missing one: empty)."""
    digests = {}
    for name in SOURCES:
        path = directory / name
        digests[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""
    return digests


def built_file(directory: Path, module: str) -> Path | None:
    """The compiled module's file in ``directory``, if one was built."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = directory / f"{module}{suffix}"
        if path.exists():
            return path
    return None


def file_stamp(path: Path) -> str:
    """What identifies a built file: its SHA-256 (not its time, which an installer that
    unpacks a wheel sets anew)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def remove_built(directory: Path) -> None:
    """Remove the modules a build left in ``directory`` (a build that fails, optional, must
    not leave the one before it to be recorded as its own)."""
    for module in MODULES:
        path = built_file(directory, module)
        if path is not None:
            path.unlink()


def write_record(directory: Path) -> None:
    """Record the sources and the modules just built in ``directory`` (the build calls it)."""
    built = {}
    for module in MODULES:
        path = built_file(directory, module)
        if path is not None:
            built[path.name] = file_stamp(path)
    record = {"sources_sha256": sources_sha256(directory), "built": built}
    (directory / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def state(directory: Path) -> str:
    """``"none"`` (nothing built), ``"current"`` (built from these sources) or ``"stale"``."""
    files = [built_file(directory, module) for module in MODULES]
    if all(path is None for path in files):
        return "none"
    record_path = directory / RECORD
    if any(path is None for path in files) or not record_path.exists():
        return "stale"
    record = json.loads(record_path.read_text())
    stamps = {path.name: file_stamp(path) for path in files if path is not None}
    if record.get("built") != stamps or record.get("sources_sha256") != sources_sha256(directory):
        return "stale"
    return "current"


class _PureSource(MetaPathFinder):
    """Imports the ``.py`` of each compiled module of ``package`` in place of what was built."""

    def __init__(self, package: str, directory: Path) -> None:
        self._directory = directory
        self._names = {f"{package}.{module}": module for module in MODULES}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        module = self._names.get(fullname)
        if module is None:
            return None
        return importlib.util.spec_from_file_location(fullname, self._directory / f"{module}.py")


def choose(package: str = "sim.des", directory: Path = HERE) -> bool:
    """Use the compiled modules if they are current and wanted; else put the ``.py`` modules
    in their place.  True when the compiled ones are used."""
    found = state(directory)
    if found == "current" and not os.environ.get(PURE_PYTHON_VARIABLE):
        return True
    if found == "stale":
        warnings.warn(
            f"{package}: compiled modules older than their sources, running the pure-Python "
            "engine (rebuild with `make setup`)",
            RuntimeWarning,
            stacklevel=2,
        )
    if found != "none":
        sys.meta_path.insert(0, _PureSource(package, directory))
    return False
