"""The fuzz suite's runner: the CLI in a subprocess under limits, and the promises it keeps.

``run_cli`` runs the installed ``loopbudget`` in a subprocess under an
address-space limit and a time limit, with lowered caps so that whatever the
generators produce either runs in seconds or is refused, and returns what it
printed, its exit code and its peak memory.  ``check_outcome`` holds the
promises every run must keep.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

LOOPBUDGET = Path(sys.executable).with_name("loopbudget")
ADDRESS_SPACE_BYTES = 3 * 2**30
"""Virtual memory a run may map; pyarrow alone maps about 1.9 GB of it."""
RESIDENT_BYTES = 1_000 * 2**20
"""Peak resident memory a run may reach: the lowered memory cap plus the interpreter."""
TIMEOUT_S = 60
CAPS = {
    "LOOPBUDGET_MAX_MEMORY_MB": "512",
    "LOOPBUDGET_MAX_TURNS": "100000",
    "LOOPBUDGET_MAX_ROLLOUT_TURNS": "2000",
}
"""Caps lowered so that an admitted run takes seconds; the estimates must keep it in memory."""


@dataclass(frozen=True)
class Outcome:
    """What one run printed and used."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    peak_rss_bytes: int
    timed_out: bool
    """Killed: by the time limit (or by the system for want of memory)."""


LAUNCHER = """
import os, resource, sys
limit, report, program = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
pid = os.fork()
if pid == 0:
    os.execv(program[0], program)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""
"""A small process between the suite and the run: a child forked from the suite's own
large process would count the suite's resident pages as its peak (Linux keeps the
pre-exec high-water mark), so the run is forked from this one and measured by it."""


def run_cli(args: list[str], cwd: Path) -> Outcome:
    """``loopbudget ARGS`` in a subprocess under the limits; its peak RSS from ``wait4``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPBUDGET_")}
    env.update(CAPS)
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as folder,
    ):
        report = Path(folder) / "report"
        command = [sys.executable, "-c", LAUNCHER, str(ADDRESS_SPACE_BYTES), str(report)]
        process = subprocess.Popen(
            [*command, str(LOOPBUDGET), *args],
            stdout=out,
            stderr=err,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        timer = threading.Timer(TIMEOUT_S, os.killpg, (process.pid, signal.SIGKILL))
        timer.start()
        try:
            process.wait()
        finally:
            timer.cancel()
        exit_code, peak_kib = (-signal.SIGKILL, 0)
        if report.is_file():
            exit_code, peak_kib = map(int, report.read_text().split())
        killed = exit_code == -signal.SIGKILL
        out.seek(0)
        err.seek(0)
        return Outcome(
            tuple(args),
            exit_code,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            peak_kib * 1024,
            killed,
        )


PROGRESS_LINE = re.compile(r"^.+: [\d,]+\.\d(/[\d,]+ \(\d+%\))?, \d+:\d\d:\d\d elapsed")
"""A progress line as ``sim.report.progress`` prints one every few seconds without a terminal
(thousands with commas; no total and share where the work has no total)."""


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} in JSON output")


def check_outcome(outcome: Outcome) -> None:
    """Exit 0 or 2, never a traceback, one error line for 2, valid JSON, memory in bounds.

    A sweep that finished with failed points exits 1 and says so in one line (its
    rows carry each point's error), as ``docs/errors.md`` documents.
    """
    assert not outcome.timed_out, outcome
    finished_with_failed_points = (
        outcome.args[:1] == ("sweep",)
        and outcome.exit_code == 1
        and outcome.stderr.count("\n") == 1
        and "their rows carry the error" in outcome.stderr
    )
    assert outcome.exit_code in (0, 2) or finished_with_failed_points, outcome
    assert "Traceback" not in outcome.stderr, outcome
    assert outcome.peak_rss_bytes <= RESIDENT_BYTES, outcome
    lines = outcome.stderr.splitlines()
    # Work longer than a few seconds reports its progress on standard error (no terminal).
    said = [line for line in lines if not PROGRESS_LINE.match(line)]
    if outcome.exit_code == 2:
        progress = outcome.args[:1] == ("capacity",)
        assert [line for line in lines if line.startswith("error: ")] == lines[-1:], outcome
        assert progress or len(said) == 1, outcome
    elif outcome.exit_code == 0:
        assert all(line.startswith("wrote ") for line in said), outcome
    if "--json" in outcome.args and outcome.stdout:
        json.loads(outcome.stdout, parse_constant=_no_constant)
