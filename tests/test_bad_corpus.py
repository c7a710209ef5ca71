"""The bad-input corpus (``tests/data/bad/cases.toml``): one line, exit code 2, for every case.

Each case is a command of issue 11 that used to print a traceback, blow up
memory, lose work or be silently accepted; it now names the field, the value
and what is allowed, and keeps on stdout what finished before the error.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from app_support import APP, TIMEOUT_S, upload
from streamlit.testing.v1 import AppTest
from support import CliResult, assert_one_line_error

from sim.sweep.execute import run_sweep
from sim.sweep.lock import writer_lock
from sim.sweep.manifest import MANIFEST
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep

BAD = Path(__file__).parent / "data" / "bad"
CASES: list[dict[str, Any]] = tomllib.loads((BAD / "cases.toml").read_text())["case"]
DEEP = "[" * 3000 + "]" * 3000


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished results directory of ``sweep-small.toml``."""
    out = tmp_path_factory.mktemp("corpus") / "small"
    run_sweep(load_sweep(BAD / "sweep-small.toml"), out, workers=0)
    return out


def arguments(case: dict[str, Any], tmp: Path, results: Path) -> list[str]:
    places = {"{bad}": str(BAD), "{tmp}": str(tmp), "{results}": str(results), "{deep}": DEEP}
    out = []
    for argument in case["args"]:
        for name, value in places.items():
            argument = argument.replace(name, value)
        out.append(argument)
    return out


def assert_kept_then_one_error(result: CliResult, case: dict[str, Any]) -> None:
    """Finished work on stdout, then one error line last on stderr (after any progress)."""
    assert result.exit_code == 2, result
    for fragment in case.get("kept", []):
        assert fragment in result.stdout, (fragment, result.stdout)
    if result.stdout.lstrip().startswith("{"):
        json.loads(result.stdout)
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:]
    if not case.get("progress"):
        assert len(lines) == 1, result.stderr
    for fragment in case["error"]:
        assert fragment in lines[-1], (fragment, lines[-1])


def damage(setup: str, results: Path, copy: Path) -> None:
    """``copy`` becomes a copy of ``results`` damaged as ``setup`` says."""
    shutil.copytree(results, copy)
    parts, manifest = copy / "parts", copy / MANIFEST
    if setup == "zero-byte part":
        (parts / "part-000001.parquet").write_bytes(b"")
    elif setup == "truncated part":
        whole = (parts / "part-000000.parquet").read_bytes()
        (parts / "part-000000.parquet").write_bytes(whole[: len(whole) // 2])
    elif setup == "part of another chunk":
        shutil.copy(parts / "part-000000.parquet", parts / "part-000001.parquet")
    elif setup == "manifest not JSON":
        manifest.write_text("{")
    elif setup == "manifest empty object":
        manifest.write_text("{}")
    else:
        assert setup == "lock held", setup


CLI_CASES = [case for case in CASES if "args" in case]
DASHBOARD_CASES = [case for case in CASES if "args" not in case]


def case_id(case: dict[str, Any]) -> str:
    return f"{case['row']}: {case['id']}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CLI_CASES, ids=map(case_id, CLI_CASES))
def test_every_command_of_the_corpus_is_one_line_and_exit_code_2(
    case: dict[str, Any],
    cli: Callable[..., CliResult],
    tmp_path: Path,
    results: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in case.get("env", {}).items():
        monkeypatch.setenv(name, value)
    with contextlib.ExitStack() as held:
        if "setup" in case:
            damage(case["setup"], results, tmp_path / "res")
        if case.get("setup") == "lock held":
            held.enter_context(writer_lock(tmp_path / "res"))
        result = cli(*arguments(case, tmp_path, results))
    if "kept" in case or case.get("progress"):
        assert_kept_then_one_error(result, case)
    else:
        assert_one_line_error(result, *case["error"])
    assert not (tmp_path / "out").exists(), "a refused sweep leaves no directory behind"


@pytest.mark.slow
@pytest.mark.parametrize("case", DASHBOARD_CASES, ids=map(case_id, DASHBOARD_CASES))
def test_every_dashboard_case_is_a_message_and_the_page_keeps_its_state(
    case: dict[str, Any], tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(results, tmp_path / "results" / "small")
    monkeypatch.chdir(tmp_path)
    app = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    before = app.markdown[0].value
    if "upload" in case:
        upload(app, case["upload"], (BAD / case["upload"]).read_bytes())
    elif "explorer_path" in case:
        app.text_input(key="sweep:path").input(case["explorer_path"]).run()
    else:
        app.radio(key="sweep:source").set_value("a Parquet file").run()
        empty = io.BytesIO()
        pq.write_table(read_results(results).slice(0, 0), empty)
        app.file_uploader(key="sweep:upload").set_value(
            ("empty.parquet", empty.getvalue(), "application/octet-stream")
        ).run()
    assert not app.exception, [e.message for e in app.exception]
    [error] = [e.value for e in app.error]
    for fragment in case["error"]:
        assert fragment in error, (fragment, error)
    assert app.markdown[0].value == before, "the scenario shown before is kept"


def test_the_corpus_covers_every_row_of_the_issue_and_the_smaller_cases() -> None:
    rows = {case["row"] for case in CASES}
    assert {str(row) for row in range(1, 17)} | {"smaller", "caps"} <= rows
