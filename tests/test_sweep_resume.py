"""Crash and resume: a sweep killed with SIGKILL part-way loses no finished point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.compute as pc
import pytest

from sim.sweep.execute import run_sweep
from sim.sweep.store import ResultsDir, read_results
from sim.sweep.sweepfile import load_sweep

pytestmark = pytest.mark.slow

POINTS = 60
MANY_QUICK_POINTS = f"""
name = "killable"
base = "codex-spark"
transports = ["http", "ws"]
engine = "des"
rollouts = 4

[[axes]]
path = "network.rtt_ms"
start = 1.0
stop = 200.0
num = {POINTS}
"""
KILL_AFTER_PARTS = 10
TIMEOUT_S = 120


def test_a_sweep_killed_part_way_resumes_to_the_rows_of_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    source = tmp_path / "sweep.toml"
    source.write_text(textwrap.dedent(MANY_QUICK_POINTS))
    out = tmp_path / "killed"
    command = [sys.executable, "-c", "from sim.cli.app import main; main()"]
    arguments = ["sweep", str(source), "--out", str(out), "--workers", "2"]
    with (tmp_path / "log").open("w") as log:
        process = subprocess.Popen(
            [*command, *arguments], stdout=log, stderr=log, start_new_session=True
        )
        try:
            results = ResultsDir(out)
            deadline = time.monotonic() + TIMEOUT_S
            while len(results.finished()) < KILL_AFTER_PARTS and time.monotonic() < deadline:
                assert process.poll() is None, (tmp_path / "log").read_text()
                time.sleep(0.01)
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == -signal.SIGKILL
    finished = results.finished()
    assert KILL_AFTER_PARTS <= len(finished) < POINTS

    survivors = read_results(out)
    assert survivors.num_rows == 2 * len(finished)
    sweep = load_sweep(source)
    resumed = run_sweep(sweep, out, workers=0, resume=True)
    assert resumed.resumed == len(finished)
    assert resumed.computed == POINTS - len(finished)

    run_sweep(sweep, tmp_path / "whole", workers=0)
    table = read_results(out)
    assert table.equals(read_results(tmp_path / "whole"))
    assert table.num_rows == 2 * POINTS
    keys = set(zip(table["point"].to_pylist(), table["transport"].to_pylist(), strict=True))
    assert len(keys) == table.num_rows
    assert table.filter(pc.is_valid(table["error"])).num_rows == 0
