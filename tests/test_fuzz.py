"""Fuzzing the command line: generated scenario files, ``--set`` values, sweep files and
argument lists, valid and invalid (``fuzz_inputs``), each run in a subprocess under an
address-space and a time limit (``fuzz_support``).

Every run exits 0 or 2, never prints a traceback, prints exactly one error line
for exit 2 and nothing on stderr for exit 0 but what it wrote, prints valid JSON (no NaN, no
infinity) for ``--json`` and stays within the memory bound.  Derandomized,
like the property tests: the same examples run every time, and
``max_examples`` keeps the whole suite to about a minute.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from fuzz_inputs import ARGUMENT_LISTS, RUN_OPTIONS, SCENARIO_FILES, SETS, SWEEP_FILES
from fuzz_support import check_outcome, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.dashboard.io import scenario_from_upload
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
FUZZ = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
TRANSPORTS = st.sampled_from(["", ":http", ":ws", ":http-full", ":ws-append", ":ws", ":tcp"])


def run(args: list[str], tmp: Path, results: Path | None = None) -> None:
    places = {"{tmp}": str(tmp), "{results}": str(results)}
    for name, value in places.items():
        args = [arg.replace(name, value) for arg in args]
    check_outcome(run_cli(args, ROOT))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fuzz") / "small"
    run_sweep(load_sweep(ROOT / "tests" / "data" / "bad" / "sweep-small.toml"), out, workers=0)
    return out


@FUZZ
@given(content=SCENARIO_FILES, transport=TRANSPORTS, options=RUN_OPTIONS)
def test_generated_scenario_files(content: bytes, transport: str, options: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.toml"
        path.write_bytes(content)
        run(["run", f"{path}{transport}", *options], Path(folder))


@FUZZ
@given(
    sets=st.lists(SETS, min_size=1, max_size=3),
    command=st.sampled_from(["run", "compare"]),
    options=RUN_OPTIONS,
)
def test_generated_set_values(sets: list[str], command: str, options: list[str]) -> None:
    specs = ["codex-spark:http", "codex-spark:ws"] if command == "compare" else ["codex-spark"]
    assignments = [token for assignment in sets for token in ("--set", assignment)]
    with tempfile.TemporaryDirectory() as folder:
        run([command, *specs, *assignments, *options], Path(folder))


SWEEP_OPTIONS = st.sampled_from(
    [[], [], ["--resume"], ["--workers", "-1"], ["--workers", "100000"], ["--scheduler", "x"]]
)


@settings(FUZZ, max_examples=12)
@given(sweep=SWEEP_FILES, options=SWEEP_OPTIONS, then_plot=st.booleans())
def test_generated_sweep_files(sweep: dict[str, Any], options: list[str], then_plot: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sweep.toml"
        path.write_text(tomli_w.dumps(sweep))
        out = Path(folder) / "out"
        workers = [] if "--workers" in options or "--scheduler" in options else ["--workers", "0"]
        run(["sweep", str(path), "--out", str(out), *workers, *options], Path(folder))
        axes = sweep.get("axes")
        if then_plot and isinstance(axes, list) and axes and isinstance(axes[0], dict):
            x = str(axes[0].get("path"))
            run(["plot", str(out), "--x", x, "--out", f"{folder}/figure"], Path(folder))


@FUZZ
@given(args=ARGUMENT_LISTS)
def test_generated_argument_lists(args: list[str], results: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run(args, Path(folder), results)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(content=SCENARIO_FILES)
def test_generated_dashboard_uploads_give_a_scenario_or_one_line(content: bytes) -> None:
    try:
        assert isinstance(scenario_from_upload("fuzzed.toml", content), Scenario)
    except ScenarioError as error:
        assert len(str(error).splitlines()) == 1
