"""Progress that moves: fleet replications report their simulated time while they run, bars
only go forward, and without a terminal a line comes every few seconds (never with --quiet).
"""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from support import scenario

from sim.analysis.load_curve import load_curve
from sim.analysis.run import Engine
from sim.cli.app import app
from sim.des import progress
from sim.des.runners import simulate_fleet
from sim.report.progress import PlainProgress, replication_progress
from sim.sweep.workers import replication_workers
from sim.turn.transports import Transport

SMALL_FLEET = (
    "codex-spark",
    "load.agents=6",
    "load.duration_s=120",
    "load.warmup_s=20",
    "load.replications=2",
)


class RecordingBar:
    """The calls a command makes on its bar, for checking what a user would see."""

    def __init__(self) -> None:
        self.completed: list[float] = []

    def update(self, task: Any, completed: float | None = None, **_: Any) -> None:
        if completed is not None:
            self.completed.append(completed)


@pytest.mark.slow
def test_a_replication_reports_its_simulated_time_without_changing_it() -> None:
    s = scenario(*SMALL_FLEET)
    quiet = simulate_fleet(s, Transport.WS, 0)
    heard: list[tuple[str, float]] = []
    previous, progress.sink = progress.sink, lambda job, f: heard.append((job, f))
    try:
        reported = simulate_fleet(s, Transport.WS, 0, job="r0")
    finally:
        progress.sink = previous
    fractions = [f for job, f in heard if job == "r0"]
    assert len(fractions) > 50  # one per checkpoint of the window, then the end
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and fractions[0] < 0.2
    assert (quiet.records.e2e_s == reported.records.e2e_s).all()


def advance_of_load(workers: int) -> list[float]:
    bar = RecordingBar()
    s = scenario(*SMALL_FLEET)
    with replication_workers(workers, None) as pool, replication_progress(bar, 0) as at_least:
        done: list[int] = []

        def finished(_: Any) -> None:
            done.append(1)
            at_least(2 * len(done))

        load_curve("t", s, Transport.WS, Engine.DES, [3, 6], None, pool.executor, None, finished)
    return bar.completed


@pytest.mark.slow
def test_load_bar_advances_monotonically_within_each_point_here() -> None:
    completed = advance_of_load(1)
    assert completed == sorted(completed)
    assert completed[-1] == pytest.approx(4.0)
    between = [c for c in completed if c % 1 != 0]
    assert len(between) > 20, "the bar moved only when whole replications finished"


@pytest.mark.slow
def test_load_bar_advances_monotonically_with_worker_processes() -> None:
    completed = advance_of_load(2)
    assert completed == sorted(completed)
    assert completed[-1] == pytest.approx(4.0)
    assert len([c for c in completed if c % 1 != 0]) > 20


def test_plain_lines_come_every_few_seconds_and_go_forward(
    capsys: pytest.CaptureFixture[str],
) -> None:
    now = [0.0]
    bar = PlainProgress(every_s=5.0, clock=lambda: now[0])
    task = bar.add_task("load", total=10)
    for step in range(1, 11):
        now[0] += 2.0
        bar.update(task, completed=step)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4  # at 6, 12 and 18 s, then the completion
    assert [line.split(": ")[1].split("/")[0] for line in lines] == ["3.0", "6.0", "9.0", "10.0"]
    assert "left" in lines[0] and "(100%)" in lines[-1]


def test_short_work_prints_no_line(capsys: pytest.CaptureFixture[str]) -> None:
    bar = PlainProgress(every_s=5.0, clock=lambda: 0.0)
    task = bar.add_task("quick", total=3)
    bar.advance(task, 3)
    assert capsys.readouterr().err == ""


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [False, True])
def test_load_prints_lines_without_a_terminal_unless_quiet(
    quiet: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sim.report.progress.LINE_EVERY_S", 0.0)
    args = ["load", "codex-spark:ws", "--agents", "4", "--workers", "1"]
    args += [f"--set={s}" for s in SMALL_FLEET[1:] if not s.startswith("load.agents")]
    result = CliRunner().invoke(app, args + (["--quiet"] if quiet else []))
    assert result.exit_code == 0, result.output
    lines = [
        line for line in result.stderr.splitlines() if "replications" in line or " at " in line
    ]
    if quiet:
        assert result.stderr == ""
    else:
        done = [float(line.split(": ")[1].split("/")[0]) for line in lines]
        assert len(done) > 3 and done == sorted(done)
