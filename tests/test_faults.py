"""Faults that must not lose work: damaged parts, a second writer, a failed trace, an interrupt.

And what the corpus cannot show with one command: that a refused run did no
work first, that a raised cap admits the run, that the estimates are upper
bounds of what the engines use.
"""

from __future__ import annotations

import errno
import json
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CliResult, assert_one_line_error, scenario
from test_bad_corpus import BAD

import sim.analysis.load_curve
import sim.cli.running
import sim.report.chrome_trace
from models.errors import ScenarioError
from sim.analysis.estimates import single_agent_need
from sim.analysis.fleet_need import fleet_need
from sim.cli.output import json_text
from sim.dashboard.sweeps import inside_root
from sim.des.runners import simulate, simulate_fleet
from sim.report.chrome_trace import write_trace
from sim.sweep import cluster
from sim.sweep.execute import run_sweep
from sim.sweep.lock import writer_lock
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
SMALL = BAD / "sweep-small.toml"


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "intact"
    run_sweep(load_sweep(SMALL), out, workers=0)
    return out


def test_resume_recomputes_damaged_parts_to_the_rows_of_an_intact_run(
    intact: Path, tmp_path: Path, cli: Cli
) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(intact, damaged)
    (damaged / "parts" / "part-000000.parquet").write_bytes(b"")
    whole = (damaged / "parts" / "part-000001.parquet").read_bytes()
    (damaged / "parts" / "part-000001.parquet").write_bytes(whole[:-20])
    result = cli("sweep", str(SMALL), "--out", str(damaged), "--workers", "0", "--resume")
    assert result.exit_code == 0, result
    assert "2 damaged parts recomputed" in result.stdout
    assert read_results(damaged).equals(read_results(intact))


def test_a_second_writer_is_refused_and_leaves_the_first_ones_temporary_part(
    intact: Path, tmp_path: Path, cli: Cli
) -> None:
    running = tmp_path / "running"
    shutil.copytree(intact, running)
    in_flight = running / "parts" / ".part-000002.parquet.tmp"
    in_flight.write_bytes(b"being written")
    with writer_lock(running):
        result = cli("sweep", str(SMALL), "--out", str(running), "--workers", "0", "--resume")
    assert_one_line_error(result, "another sweep", "is writing there")
    assert in_flight.read_bytes() == b"being written"


def test_an_unreachable_scheduler_fails_fast_and_leaves_nothing(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    out = tmp_path / "out"
    result = cli("sweep", str(SMALL), "--out", str(out), "--scheduler", "tcp://127.0.0.1:1")
    assert_one_line_error(result, "--scheduler tcp://127.0.0.1:1", "no Dask scheduler answered")
    assert not out.exists()


def test_a_trace_that_cannot_be_written_keeps_the_summary(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(path: Path, traces: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sim.report.chrome_trace, "write_trace", disk_full)
    trace = tmp_path / "x.json"
    result = cli("run", "codex-spark:ws", "-n", "3", "--trace", str(trace), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["rollouts"] == 3
    assert result.stderr.splitlines() == [
        f"error: --trace {trace}: cannot be written (No space left on device)"
    ]


def test_compare_checks_the_second_spec_before_simulating_the_first(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_simulation(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before every spec was checked")

    monkeypatch.setattr(sim.cli.running, "execute", no_simulation)
    assert_one_line_error(cli("compare", "codex-spark:ws", "nope:http"), "'nope'")
    big = ("--set", "workload.tool_calls_per_rollout=9000", "-n", "2000")
    assert_one_line_error(cli("compare", "codex-spark:ws", "codex-spark:http", *big), "memory")


def test_an_interrupted_load_prints_the_points_it_finished(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sim.analysis.load_curve.run_fleet
    calls = []

    def interrupted_second(*args: object, **options: object) -> object:
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **options)

    monkeypatch.setattr(sim.analysis.load_curve, "run_fleet", interrupted_second)
    result = cli("load", "tests/data/tiny-fleet.toml", "--agents", "2,3", "--json")
    assert result.exit_code == 130
    [point] = json.loads(result.stdout)["points"]
    assert point["load"]["agents"] == 2


def test_a_raised_cap_admits_the_run(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ("run", "codex-spark:http", "--engine", "analytic", "--json")
    long = ("--set", "workload.tool_calls_per_rollout=15000")
    assert_one_line_error(cli(*args, *long), "rollout length cap", "=16000")
    monkeypatch.setenv("LOOPBUDGET_MAX_ROLLOUT_TURNS", "16000")
    result = cli(*args, *long)
    assert result.exit_code == 0, result
    assert json.loads(result.stdout)["turns_per_rollout"] == 15001


def test_json_output_refuses_a_non_finite_number_by_name() -> None:
    with pytest.raises(ScenarioError, match=r"result e2e_s.ci95\[1\] = inf"):
        json_text({"e2e_s": {"mean": 1.0, "ci95": [0.5, float("inf")]}})


def test_show_prints_a_scenario_file_as_written(cli: Cli) -> None:
    result = cli("show", str(BAD / "cycle-b.toml"))
    assert result.exit_code == 0
    assert result.stdout == (BAD / "cycle-b.toml").read_text()


def test_the_explorer_opens_directories_under_its_root_only(tmp_path: Path) -> None:
    root = tmp_path / "results"
    (root / "mine").mkdir(parents=True)
    (root / "out").symlink_to(tmp_path)
    assert inside_root(root, str(root / "mine")) == root / "mine"
    with pytest.raises(ScenarioError, match="outside"):
        inside_root(root, str(root / "out"))


@pytest.mark.slow
def test_the_estimates_are_upper_bounds_of_what_the_engines_use(tmp_path: Path) -> None:
    """Peak traced memory of small runs of each kind, against their estimates."""
    one = scenario("codex-spark")
    fleet = scenario("tests/data/tiny-fleet.toml", "load.agents=300", "load.duration_s=30")

    def traced() -> None:
        turns = simulate(one, Transport.WS, 200, keep_turns=True).turn_records
        write_trace(tmp_path / "trace.json", {"run": turns})

    runs = {
        "one agent": (lambda: simulate(one, Transport.WS, 3000), single_agent_need("", one, 3000)),
        "traced": (traced, single_agent_need("", one, 200, traced=True)),
        "fleet": (
            lambda: simulate_fleet(fleet, Transport.HTTP, 0),
            fleet_need("", fleet, Transport.HTTP),
        ),
    }
    for name, (run, need) in runs.items():
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak <= need.memory_bytes, (name, peak, need.memory_bytes)
