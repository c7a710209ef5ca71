"""A command imports what it needs: heavy packages load only in the commands that use them.

Each check runs a fresh interpreter and compares the set of top-level packages it
imported with the heavy ones (a set comparison, not a timing): start-up time is
what a user waits for on every command, and these packages are most of it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
"""Each check starts an interpreter."""

HEAVY = frozenset(
    {"scipy", "pandas", "matplotlib", "dask", "distributed", "streamlit", "pyarrow", "simpy"}
    | {"opentelemetry", "google", "openai", "starlette", "uvicorn", "websockets", "duckdb"}
)
"""Packages that cost a large share of a second or more to import."""


def imported_after(code: str, whole: bool = False) -> set[str]:
    """Top-level packages (``whole``: every module) in ``sys.modules`` after running ``code``
    in a new interpreter."""
    name = "m" if whole else "m.split('.')[0]"
    listing = f"print(json.dumps(sorted({{{name} for m in sys.modules}})))"
    probe = f"{code}\nimport json, sys\n{listing}"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def cli(*args: str) -> str:
    """Run the command line in-process, swallowing its exit."""
    return (
        "from sim.cli.app import app\n"
        f"try:\n    app.main({list(args)!r}, standalone_mode=False)\n"
        "except BaseException:\n    pass"
    )


@pytest.mark.parametrize(
    "args",
    [["--help"], ["run", "no-such-preset:ws"], ["presets"]],
)
def test_quick_commands_import_no_heavy_package(args: list[str]) -> None:
    assert imported_after(cli(*args)) & HEAVY == set()


@pytest.mark.parametrize("args", [["--help"], ["run", "no-such-preset:ws"]])
def test_help_and_a_bad_source_import_no_package_but_click(args: list[str]) -> None:
    """Neither needs numpy, pydantic or rich: the group lists its commands from their help,
    the spec is parsed and the preset looked up before the scenario model loads."""
    loaded = imported_after(cli(*args))
    outside = {m for m in loaded if not m.startswith("_")} - set(sys.stdlib_module_names)
    assert outside - {"models", "sim"} == {"click"}


def test_a_bad_source_is_refused_before_the_engines_load() -> None:
    """``run`` checks the spec, the engine and the source first, so an unknown preset's
    one-line error loads neither engine nor the summaries."""
    loaded = imported_after(cli("run", "no-such-preset:ws"), whole=True)
    engines = {"sim.analytic.agent.engine", "sim.des.runners", "sim.analysis.summary"}
    assert "models.loading" in loaded
    assert loaded & engines == set()


def test_one_agent_run_imports_no_heavy_package() -> None:
    """``run`` simulates one agent without an event queue (no SimPy) and writes no file."""
    assert imported_after(cli("run", "codex-spark:ws", "--rollouts", "20")) & HEAVY == set()


def test_one_agent_simulated_loads_neither_the_analytic_engine_nor_the_fleet() -> None:
    """Each engine loads when it runs: a one-agent DES run estimates its needs without an
    expectation and summarizes without the fleet's statistics; its bar only on a terminal."""
    others = {
        "sim.analytic.agent.engine",
        "sim.analytic.agent.expectations",
        "sim.analytic.fleet.demand",
        "sim.analysis.fleet_summary",
        "rich.progress",
    }
    simulated = imported_after(cli("run", "codex-spark:ws", "--rollouts", "20"), whole=True)
    assert simulated & others == set()
    analytic = imported_after(cli("run", "codex-spark:ws", "--engine", "analytic"), whole=True)
    assert "sim.analytic.agent.engine" in analytic


def test_writing_records_loads_pyarrow() -> None:
    """The check has teeth: a command that writes Parquet does import pyarrow."""
    code = cli("run", "codex-spark:ws", "--rollouts", "20", "--out", "/dev/null/x.parquet")
    assert "pyarrow" in imported_after(code)


def test_the_analytic_engine_imports_scipy_signal_only_when_it_compacts() -> None:
    plain = imported_after(
        "from sim.analytic.agent.engine import expect\n"
        "from models.loading import load_scenario\n"
        "from sim.turn.transports import Transport\n"
        "expect(load_scenario('codex-spark'), Transport.WS)"
    )
    assert plain & HEAVY <= {"scipy"}


def test_help_lists_each_lazy_command_as_its_own_help_would() -> None:
    """``--help`` names the commands it does not import with their own help's words."""
    import importlib

    import click

    from sim.cli.lazy_group import LAZY_COMMANDS

    for name, (module, attribute, first_paragraph) in LAZY_COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert command.name == name
        for limit in (30, 45, 80):
            expected = command.get_short_help_str(limit)
            listed = click.Command(name, help=first_paragraph).get_short_help_str(limit)
            assert listed == expected, name
