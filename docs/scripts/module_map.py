"""Every module under models/ and sim/ with its layer, the engine it serves and its purpose,
as the map of docs/model.md shows them.

The layers and their ranks are the ones ``tests/test_layers.py`` enforces (imported from
it, with its list of modules and its import parser), so a module added, moved or renamed
without the map following makes ``tests/test_docs.py`` fail.  The purpose is the first
sentence of the module's docstring.  The engine a module serves follows from the import
graph: a module of an engine serves that engine; any other serves the engines whose
modules it imports or that import it, directly or through other modules, and a package
what its modules serve ("shared" when that is both engines, "neither" when it is none).

    .venv/bin/python -m docs.scripts.module_map
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from docs.scripts.markdown import table
from tests.test_layers import APART, LAYERS, ROOT, imports, layer_of, modules

ENGINE_NAMES = {"sim.des": "DES", "sim.analytic": "analytic"}
"""What the map calls each engine, by the package its layers sit in."""
SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z`(])")


def engine_of_layer(layer: str | None) -> str | None:
    """The engine a layer belongs to (the layers ``APART`` keeps from each other), if any."""
    if layer is None or not any(layer in pair for pair in APART):
        return None
    (name,) = [n for package, n in ENGINE_NAMES.items() if layer.startswith(package)]
    return name


def purpose(path: Path) -> str | None:
    """The first sentence of a module's docstring; None for an empty file (a bare package)."""
    source = path.read_text()
    if not source.strip():
        return None
    docstring = ast.get_docstring(ast.parse(source))
    if not docstring:
        raise ValueError(f"{path.relative_to(ROOT)} has no docstring to say what it is for")
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    return SENTENCE_END.split(paragraph)[0]


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Each module and the modules of models/ and sim/ it imports (function-level included)."""
    paths = dict(modules())

    def module_named(imported: str) -> str | None:
        found = [n for n in paths if imported == n or imported.startswith(n + ".")]
        return max(found, key=len) if found else None

    graph = {}
    for name, path in paths.items():
        targets = {module_named(imported) for imported in imports(path)}
        graph[name] = frozenset(t for t in targets if t is not None and t != name)
    return graph


def reachable(start: str, graph: dict[str, frozenset[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


@cache
def engines_served() -> dict[str, frozenset[str]]:
    """Each module and the engines it serves, as the module docstring defines it."""
    graph = import_graph()
    imported_by: dict[str, set[str]] = {name: set() for name in graph}
    for name in graph:
        for target in reachable(name, graph):
            imported_by[target].add(name)
    packages = {name for name, path in modules() if path.name == "__init__.py"}
    served = {}
    for name in graph:
        own = engine_of_layer(layer_of(name))
        # A package serves what its modules serve.
        members = {m for m in graph if name in packages and m.startswith(name + ".")}
        related = set(members)
        for module in members | {name}:
            related |= reachable(module, graph) | imported_by[module]
        engines = {engine_of_layer(layer_of(other)) for other in related}
        served[name] = frozenset({own} if own else engines - {None})
    return served


def engine_label(engines: Iterable[str]) -> str:
    engines = sorted(engines)
    if len(engines) == len(set(ENGINE_NAMES.values())):
        return "shared"
    return engines[0] if engines else "neither"


def folder(layer: str) -> str:
    """Where a layer lives: a folder, or one module that is a layer of its own."""
    path = layer.replace(".", "/")
    return f"{path}/" if (ROOT / path).is_dir() else f"{path}.py"


def layers_within(name: str) -> list[str]:
    """The layers a module belongs to: its own, or for a package that only holds layers
    (``sim.analytic``), the layers inside it."""
    own = layer_of(name)
    return [own] if own else [layer for layer in LAYERS if layer.startswith(name + ".")]


def layer_cell(layers: list[str]) -> str:
    folders = ", ".join(f"`{folder(layer)}`" for layer in layers)
    ranks = ", ".join(str(LAYERS[layer]) for layer in layers)
    return f"{folders} ({ranks})"


def rows() -> list[list[str]]:
    """One row per module with a docstring inside the layers, by rank."""
    served = engines_served()
    order = sorted(LAYERS, key=LAYERS.__getitem__)
    listed = []
    for name, path in modules():
        layers, text = layers_within(name), purpose(path)
        if layers and text is not None:
            listed.append((order.index(layers[0]), name, path, layers, text))
    return [
        [f"`{path.relative_to(ROOT)}`", layer_cell(layers), engine_label(served[name]), text]
        for _, name, path, layers, text in sorted(listed, key=lambda row: row[:2])
    ]


def modules_table() -> str:
    return table(["module", "layer (rank)", "engine", "what it is for"], rows())


BLOCKS = {"modules": modules_table}


if __name__ == "__main__":
    print(modules_table())
