"""The folders are layers: models <- turn <- the two engines (des | analytic) <- analysis <-
capacity, report <- traces <- front-ends: sweep, testbed, record; cli, dashboard, api.
The per-request trace table (``sim.traces.table``) sits below the reports, which write it;
the rest of ``sim.traces`` (readers, summaries, the fit) sits above them.

Every import of every module (function-level imports included) is parsed, and
a module may import only its own layer and the layers below it.  The sweep and
testbed front-ends are below the other three (the command line, the dashboard
and the Python API run and read them); those three never import each other.
Third-party packages that only the optional groups install (Streamlit, Dask,
Playwright, the openai SDK and the ASGI stack) appear nowhere in the engine,
analysis or command-line layers at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {
    "models": 0,
    "sim.turn": 1,
    "sim.des": 2,
    "sim.analytic.agent": 2,
    "sim.analytic.fleet": 3,
    "sim.analysis": 4,
    "sim.capacity": 5,
    "sim.report": 5,
    "sim.traces.table": 4.5,
    "sim.traces": 5.5,
    "sim.sweep": 6,
    "sim.testbed": 6,
    "sim.record": 6,
    "sim.cli": 7,
    "sim.dashboard": 7,
    "sim.api": 7,
}
"""Rank of each layer; a module imports ranks at or below its own, never a sibling's."""
APART = {("sim.des", "sim.analytic.agent"), ("sim.des", "sim.analytic.fleet")}
"""The two engines: neither imports the other (the analytic fleet sits above the analytic
agent it builds on, and beside the DES)."""
OPTIONAL = {
    "streamlit": "dashboard",
    "dask": "sweep",
    "distributed": "sweep",
    "playwright": "dev",
    "openai": "testbed",
    "uvicorn": "testbed",
    "starlette": "testbed",
    "websockets": "testbed",
    "httpx2": "testbed",
}


def layer_of(module: str) -> str | None:
    matches = [name for name in LAYERS if module == name or module.startswith(name + ".")]
    return max(matches, key=len) if matches else None


def modules() -> list[tuple[str, Path]]:
    found = []
    for folder in ("models", "sim"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((name, path))
    return found


def imports(path: Path, top_level_only: bool = False) -> list[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_every_module_belongs_to_a_layer() -> None:
    containers = {"sim", "sim.analytic"}
    orphans = [name for name, _ in modules() if layer_of(name) is None and name not in containers]
    assert orphans == []


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_imports_point_down_the_layers(name: str, path: Path) -> None:
    own = layer_of(name)
    if own is None:
        return
    for imported in imports(path):
        target = layer_of(imported)
        if target is None:
            continue
        assert LAYERS[target] <= LAYERS[own], f"{name} imports {imported} (a higher layer)"
        if LAYERS[target] == LAYERS[own]:
            assert target == own, f"{name} imports {imported} (a sibling layer)"
        assert (own, target) not in APART and (target, own) not in APART, (
            f"{name} imports {imported} (the DES and the analytic engine stay apart)"
        )


@pytest.mark.parametrize(("name", "path"), modules(), ids=[name for name, _ in modules()])
def test_optional_packages_are_imported_only_where_they_are_needed(name: str, path: Path) -> None:
    own = layer_of(name)
    allowed = {
        "sim.dashboard": {"dashboard", "sweep"},
        "sim.sweep": {"sweep"},
        "sim.testbed": {"testbed"},
        "sim.record": {"testbed"},
    }.get(own, set())
    front_ends = ("sim.dashboard", "sim.sweep", "sim.testbed", "sim.record")
    for imported in imports(path, top_level_only=own not in front_ends):
        group = OPTIONAL.get(imported.split(".")[0])
        if group is not None:
            assert group in allowed, f"{name} imports {imported} (optional group {group!r})"


@pytest.mark.slow
def test_the_engine_and_the_command_line_import_without_the_optional_groups() -> None:
    """In a fresh interpreter that cannot import streamlit, dask, playwright or the testbed's
    packages (the SDK and the ASGI stack)."""
    import subprocess
    import sys

    blocker = (
        "import sys\n"
        f"BLOCKED = {set(OPTIONAL)!r}\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import sim.cli.app, sim.des.runners, sim.analysis.summary\n"
        "import sim.analytic.agent.engine\n"
        "sim.cli.app.app.main(['compare', 'codex-spark:http', 'codex-spark:ws', '-n', '5'],"
        " standalone_mode=False)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "end to end" in result.stdout
