"""The bad-input corpus (``tests/data/bad/cases.toml``): one line, exit code 2, for every case.

Each case is a command that used to print a traceback, blow up memory, lose
work or be silently accepted; it now names the field, the value and what is
allowed, and keeps on stdout what finished before the error.  A case that
must run (``exit = 0``) keeps every file it was given (``files``) as it was.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from app_support import APP, TIMEOUT_S, upload
from bad_corpus import BAD, CASES, case_id
from streamlit.testing.v1 import AppTest
from support import CliResult, assert_one_line_error

from models import scenario as scenario_module
from models.errors import ScenarioError
from models.hardware import hardware_profiles
from sim import api
from sim.cli.app import MAX_LINE_CHARS
from sim.dashboard.trace_view import UPLOAD_PROMPT
from sim.sweep.execute import run_sweep
from sim.sweep.lock import writer_lock
from sim.sweep.manifest import MANIFEST, read_manifest
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep

DEEP = "[" * 3000 + "]" * 3000


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A finished results directory of a sweep file of this directory, run once."""
    made: dict[str, Path] = {}

    def of(name: str) -> Path:
        if name not in made:
            made[name] = tmp_path_factory.mktemp("corpus") / Path(name).stem
            run_sweep(load_sweep(BAD / name), made[name], workers=0)
        return made[name]

    return of


@pytest.fixture(scope="module")
def results(finished: Callable[[str], Path]) -> Path:
    """A finished results directory of ``sweep-small.toml``."""
    return finished("sweep-small.toml")


def arguments(case: dict[str, Any], tmp: Path, results: Path) -> list[str]:
    places = {
        "{bad}": str(BAD),
        "{tmp}": str(tmp),
        "{results}": str(results),
        "{deep}": DEEP,
        "{digits}": "1" * 4301,
        "{long_path}": "a" * 100_000,
    }
    out = []
    for argument in case["args"]:
        for name, value in places.items():
            argument = argument.replace(name, value)
        if argument.startswith("{points:"):
            argument = ",".join(str(n) for n in range(1, int(argument[8:-1]) + 1))
        out.append(argument)
    return out


def given_files(case: dict[str, Any], tmp: Path) -> dict[Path, bytes]:
    """Write the case's ``files`` under ``tmp`` (``@NAME`` copies ``NAME`` of this directory)
    and make its ``fifos`` (named pipes)."""
    for name in case.get("fifos", []):
        os.mkfifo(tmp / name)
    written = {}
    for name, content in case.get("files", {}).items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = (BAD / content[1:]).read_bytes() if content.startswith("@") else content.encode()
        path.write_bytes(data)
        written[path] = data
    return written


@contextlib.contextmanager
def file_size_limit(size_bytes: int) -> Iterator[None]:
    """Writes past ``size_bytes`` fail (EFBIG), as on a full disk, while the command runs."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size_bytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def assert_whole(directory: Path) -> None:
    """Every run (point, seed, transport) of a finished results directory exactly once."""
    table = read_results(directory)
    keys = list(zip(*(table[c].to_pylist() for c in ("point", "seed", "transport")), strict=True))
    assert len(keys) == len(set(keys)) == table.num_rows
    assert table.num_rows == sum(
        manifest.part_rows(chunk)
        for manifest in [read_manifest(directory)]
        for chunk in range(manifest.chunks)
    )


def assert_ran_cleanly(result: CliResult) -> None:
    assert result.exit_code == 0, result
    assert "Traceback" not in result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("error")]


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


def damage(setup: str, results: Path, copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    elif setup == "a part of 100,000 rows":
        rows = pq.read_table(parts / "part-000000.parquet")
        pq.write_table(pa.concat_tables([rows] * 25_000), parts / "part-000001.parquet")
    elif setup == "hardware profile edited":
        # models/hardware.toml as a user edits it: the profile the base scenario names
        profiles = dict(hardware_profiles())
        profiles["cerebras-class"] = profiles["cerebras-class"].model_copy(
            update={"overhead_ms": 500.0}
        )
        monkeypatch.setattr(scenario_module, "hardware_profiles", lambda: profiles)
    elif setup == "manifest not JSON":
        manifest.write_text("{")
    elif setup == "manifest empty object":
        manifest.write_text("{}")
    else:
        assert setup == "lock held", setup


CLI_CASES = [case for case in CASES if "args" in case]
API_CASES = [case for case in CASES if "api" in case]
DASHBOARD_CASES = [case for case in CASES if not {"args", "server", "api"} & set(case)]


@pytest.mark.slow
@pytest.mark.parametrize("case", CLI_CASES, ids=map(case_id, CLI_CASES))
def test_every_command_of_the_corpus_is_one_line_and_exit_code_2(
    case: dict[str, Any],
    cli: Callable[..., CliResult],
    tmp_path: Path,
    results: Path,
    finished: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in case.get("env", {}).items():
        monkeypatch.setenv(name, value)
    files = given_files(case, tmp_path)
    if "cwd" in case:
        monkeypatch.chdir(tmp_path / case["cwd"])
    with contextlib.ExitStack() as held:
        if "setup" in case:
            source = finished(case.get("results", "sweep-small.toml"))
            damage(case["setup"], source, tmp_path / "res", monkeypatch)
        if case.get("setup") == "lock held":
            held.enter_context(writer_lock(tmp_path / "res"))
        if "file_size" in case:
            held.enter_context(file_size_limit(case["file_size"]))
        port = held.enter_context(socket.create_server(("127.0.0.1", 0))).getsockname()[1]
        result = cli(
            *(a.replace("{busy_port}", str(port)) for a in arguments(case, tmp_path, results))
        )
    if case.get("exit", 2) == 0:
        assert_ran_cleanly(result)
        for fragment in case.get("stdout", []):
            assert fragment in result.stdout, (fragment, result.stdout)
        if "setup" in case:
            assert_whole(tmp_path / "res")
    elif "kept" in case or case.get("progress"):
        assert_kept_then_one_error(result, case)
    else:
        assert_one_line_error(result, *case["error"])
    assert all(len(line) <= MAX_LINE_CHARS + len("error: ") for line in result.stderr.splitlines())
    for path, content in files.items():
        assert path.is_file() and path.read_bytes() == content, f"{path} was not kept"
    assert not (tmp_path / "out").exists(), "a refused sweep leaves no directory behind"


@pytest.mark.slow
@pytest.mark.parametrize("case", DASHBOARD_CASES, ids=map(case_id, DASHBOARD_CASES))
def test_every_dashboard_case_is_a_message_and_the_page_keeps_its_state(
    case: dict[str, Any], tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in case.get("env", {}).items():
        monkeypatch.setenv(name, value)
    if "setup" in case:
        damage(case["setup"], results, tmp_path / "results" / "small", monkeypatch)
    else:
        shutil.copytree(results, tmp_path / "results" / "small")
    monkeypatch.chdir(tmp_path)
    app = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    before = app.markdown[0].value
    if "upload" in case:
        upload(app, case["upload"], (BAD / case["upload"]).read_bytes())
    elif "explorer_path" in case:
        typed = case["explorer_path"].replace("{long}", "a" * 5000)
        app.text_input(key="sweep:path").input(typed).run()
    elif "parquet_upload" in case:
        app.radio(key="sweep:source").set_value("a Parquet file").run()
        content = (BAD / case["parquet_upload"]).read_bytes()
        app.file_uploader(key="sweep:upload").set_value(
            (case["parquet_upload"], content, "application/octet-stream")
        ).run()
    elif "setup" in case:
        pass  # the explorer opens the damaged directory on page load
    else:
        app.radio(key="sweep:source").set_value("a Parquet file").run()
        empty = io.BytesIO()
        pq.write_table(read_results(results).slice(0, 0), empty)
        app.file_uploader(key="sweep:upload").set_value(
            ("empty.parquet", empty.getvalue(), "application/octet-stream")
        ).run()
    assert not app.exception, [e.message for e in app.exception]
    shown = app.info if "info" in case else app.error
    # The trace view's prompt stands on the page until a trace is uploaded.
    [message] = [e.value for e in shown if e.value != UPLOAD_PROMPT]
    for fragment in case.get("info", case.get("error", [])):
        assert fragment in message, (fragment, message)
    assert app.markdown[0].value == before, "the scenario shown before is kept"


def test_the_corpus_covers_every_row_of_the_issue_and_the_smaller_cases() -> None:
    rows = {case["row"] for case in CASES}
    assert {str(row) for row in range(1, 17)} | {"smaller", "caps"} <= rows


@pytest.mark.parametrize("case", API_CASES, ids=map(case_id, API_CASES))
def test_every_api_case_raises_the_command_lines_error_in_one_line(case: dict[str, Any]) -> None:
    """The Python API raises ``ScenarioError`` (what the command line prints), nothing else."""
    call = case["api"].replace("{digits}", "1" * 4301).replace("{bad}", str(BAD))
    with pytest.raises(ScenarioError) as raised:
        eval(call, {"api": api, "Path": Path})
    message = str(raised.value)
    assert "\n" not in message and len(message) <= 300, message
    for fragment in case["error"]:
        assert fragment in message, (fragment, message)
