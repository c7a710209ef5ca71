"""Running sweeps: the results directory, resume, failed points, and Dask against serial."""

from __future__ import annotations

import gc
import json
import logging
import textwrap
from importlib.metadata import version
from pathlib import Path

import pyarrow.compute as pc
import pytest

from models.errors import ScenarioError
from models.loading import load_scenario
from sim.analysis.run import Spec
from sim.analytic.agent.engine import expect
from sim.sweep.cluster import client
from sim.sweep.execute import _on_dask, chunk_tasks, run_sweep, sweep_context
from sim.sweep.store import MANIFEST, SWEEP_FILE, ResultsDir, read_results
from sim.sweep.sweepfile import load_sweep
from sim.sweep.tasks import Context, run_chunk_table
from sim.turn.transports import Transport

ANALYTIC = """
name = "grid"
description = "two axes, analytic"
base = "codex-spark"
transports = ["http", "ws"]
points_per_part = 4

[[axes]]
path = "network.rtt_ms"
values = [10.0, 30.0, 90.0]

[[axes]]
path = "workload.tool_calls_per_rollout"
start = 5
stop = 40
num = 4
integer = true
"""

DES = """
name = "des"
base = "codex-spark"
transports = ["http", "ws"]
engine = "des"
rollouts = 8
replications = 2

[[axes]]
path = "network.rtt_ms"
values = [10.0, 60.0]

[[axes]]
path = "inference.decode_tps"
values = [300.0, 1500.0]
"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_sweep_writes_one_row_per_point_transport_and_seed(tmp_path: Path) -> None:
    source = write(tmp_path, ANALYTIC)
    out = tmp_path / "out"
    outcome = run_sweep(load_sweep(source), out, workers=0)
    assert (outcome.rows, outcome.runs, outcome.failed, outcome.resumed) == (24, 12, 0, 0)
    table = read_results(out)
    assert table.num_rows == 24
    for column in (
        "point",
        "network.rtt_ms",
        "workload.tool_calls_per_rollout",
        "transport",
        "seed",
        "engine",
        "error",
        "e2e_s_mean",
        "ttft_s_mean",
        "budget_s_decode",
        "budget_share_render",
        "api_cpu_s_per_rollout",
        "e2e_reduction",
    ):
        assert column in table.column_names, column
    assert table["point"].to_pylist() == [p for p in range(12) for _ in range(2)]
    assert table["transport"].to_pylist() == ["http", "ws"] * 12
    assert set(table["engine"].to_pylist()) == {"analytic"}
    assert table["workload.tool_calls_per_rollout"].to_pylist()[:8] == [
        5,
        5,
        17,
        17,
        28,
        28,
        40,
        40,
    ]
    for http, ws in zip(*[iter(table.to_pylist())] * 2, strict=True):
        point = load_scenario(
            "codex-spark",
            [
                f"network.rtt_ms={http['network.rtt_ms']!r}",
                f"workload.tool_calls_per_rollout={http['workload.tool_calls_per_rollout']}",
            ],
        )
        http_s, ws_s = (expect(point, t).e2e_s for t in (Transport.HTTP, Transport.WS))
        assert (http["e2e_s_mean"], ws["e2e_s_mean"]) == pytest.approx((http_s, ws_s), rel=1e-12)
        assert ws["e2e_reduction"] == pytest.approx(1 - ws_s / http_s, rel=1e-12)
    assert (out / SWEEP_FILE).read_text() == source.read_text()
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["loopbudget_version"] == version("loopbudget")
    assert manifest["runs"] == 12 and manifest["transports"] == ["http", "ws"]
    assert len(list((out / "parts").glob("part-*.parquet"))) == 3


def test_rows_read_in_the_same_order_whatever_order_parts_were_written(tmp_path: Path) -> None:
    sweep = load_sweep(write(tmp_path, ANALYTIC))
    run_sweep(sweep, tmp_path / "forward", workers=0)
    backward = ResultsDir(tmp_path / "backward")
    backward.open(sweep, resume=False)
    context = sweep_context(sweep)
    for number, tasks in reversed(list(enumerate(chunk_tasks(sweep)))):
        backward.write_part(number, run_chunk_table(context, tasks))
    assert read_results(tmp_path / "backward").equals(read_results(tmp_path / "forward"))


def test_an_existing_sweep_needs_resume_and_the_same_sweep(tmp_path: Path) -> None:
    source = write(tmp_path, ANALYTIC)
    out = tmp_path / "out"
    run_sweep(load_sweep(source), out, workers=0)
    with pytest.raises(ScenarioError, match="already holds sweep results; add --resume"):
        run_sweep(load_sweep(source), out, workers=0)
    again = run_sweep(load_sweep(source), out, workers=0, resume=True)
    assert (again.resumed, again.computed, again.rows) == (12, 0, 24)
    changed = write(tmp_path, ANALYTIC.replace("90.0", "95.0"), "changed.toml")
    with pytest.raises(ScenarioError, match="holds results of a different sweep"):
        run_sweep(load_sweep(changed), out, workers=0, resume=True)


def test_resume_runs_only_missing_parts_and_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    sweep = load_sweep(write(tmp_path, ANALYTIC))
    run_sweep(sweep, tmp_path / "whole", workers=0)
    partial = tmp_path / "partial"
    run_sweep(sweep, partial, workers=0)
    (partial / "parts" / "part-000001.parquet").unlink()
    (partial / "parts" / ".part-000002.parquet.tmp").write_bytes(b"torn write")
    outcome = run_sweep(sweep, partial, workers=0, resume=True)
    assert (outcome.resumed, outcome.computed) == (8, 4)
    assert not list((partial / "parts").glob(".*.tmp"))
    assert read_results(partial).equals(read_results(tmp_path / "whole"))


FAILING = """
name = "failing"
base = "codex-spark"
transports = ["http", "ws"]

[[axes]]
path = "api.route_ms"
values = [2.0, 40.0]
"""


def test_failed_points_are_recorded_counted_and_set_the_exit_code(tmp_path: Path, cli) -> None:
    source = write(tmp_path, FAILING)
    out = tmp_path / "out"
    result = cli("sweep", str(source), "--out", str(out), "--workers", "0")
    assert result.exit_code == 1
    assert "1 failed" in result.stdout
    assert "1 of 2 points failed" in result.stderr
    assert "api.route_cached_ms (3.0) must be <= api.route_ms (2.0)" in result.stderr
    table = read_results(out)
    assert table.num_rows == 4
    failed = table.filter(pc.is_valid(table["error"]))
    assert failed["api.route_ms"].to_pylist() == [2.0, 2.0]
    assert failed["e2e_s_mean"].null_count == 2
    assert table.filter(pc.is_null(table["error"]))["e2e_s_mean"].null_count == 0


def test_the_command_prints_a_summary_and_exits_0(tmp_path: Path, cli) -> None:
    result = cli(
        "sweep", str(write(tmp_path, ANALYTIC)), "--out", str(tmp_path / "o"), "--workers", "0"
    )
    assert result.exit_code == 0, result.stderr
    assert "24 rows (12 points x 2 transports x 1 seeds)" in result.stdout
    assert "0 failed" in result.stdout


@pytest.fixture(scope="module")
def cluster():
    """A local Dask cluster of 2 worker processes, bound to 127.0.0.1."""
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as local:
        yield local


@pytest.mark.slow
def test_a_des_sweep_on_two_dask_workers_equals_the_serial_run(tmp_path: Path, cluster) -> None:
    sweep = load_sweep(write(tmp_path, DES))
    serial = run_sweep(sweep, tmp_path / "serial", workers=0)
    distributed = run_sweep(sweep, tmp_path / "dask", scheduler=cluster.scheduler_address)
    assert serial.rows == distributed.rows == 16
    table = read_results(tmp_path / "dask")
    assert table.equals(read_results(tmp_path / "serial"))
    assert table["error"].null_count == 16
    assert len(set(table["seed"].to_pylist())) == 2
    assert table["e2e_s_ci95_low"].null_count == 0
    assert (
        table.filter(pc.equal(table["transport"], "ws"))["e2e_reduction_ci95_low"].null_count == 0
    )


class _ExplodingContext(Context):
    """A context whose evaluation raises outside the per-point guards (like a lost worker)."""

    def spec(self, transport: Transport) -> Spec:
        raise RuntimeError("worker lost")


def test_an_exception_escaping_a_worker_becomes_error_rows_of_its_chunk(
    tmp_path: Path, cluster
) -> None:
    sweep = load_sweep(write(tmp_path, ANALYTIC))
    context = _ExplodingContext(**vars(sweep_context(sweep)))
    pending = dict(enumerate(chunk_tasks(sweep)))
    with client(None, cluster.scheduler_address) as dask:
        finished = dict(_on_dask(dask, context, pending))
    assert sorted(finished) == sorted(pending)
    for number, table in finished.items():
        rows = table.to_pylist()
        assert [row["point"] for row in rows] == [t.point for t in pending[number] for _ in "ab"]
        assert all(row["error"] == "RuntimeError: worker lost" for row in rows)


TINY_FLEET = str(Path(__file__).parent / "data" / "tiny-fleet.toml")


def test_fleet_replications_on_dask_or_local_processes_equal_the_serial_run(cli, cluster) -> None:
    """``load --scheduler`` sends the replications to a running Dask scheduler and
    ``--workers 2`` to two local processes; both print the bytes of the run in one
    process (each replication has its own seeds, wherever it runs)."""
    args = ("load", TINY_FLEET, "--agents", "2,4", "--json")
    serial = cli(*args, "--workers", "1")
    assert serial.exit_code == 0, serial
    assert cli(*args, "--workers", "2").stdout == serial.stdout
    assert cli(*args, "--scheduler", cluster.scheduler_address).stdout == serial.stdout
    both = cli(*args, "--workers", "2", "--scheduler", cluster.scheduler_address)
    assert both.exit_code == 2 and "--workers and --scheduler" in both.stderr


@pytest.mark.parametrize("recomputed", [0, 1])
def test_a_sweeps_totals_are_its_directorys_read_back(tmp_path: Path, recomputed: int) -> None:
    """The totals come from the parts the run wrote and the parts it found (one of each
    here, the failing point's either way), as they read back; the collector is on again."""
    one_per_part = FAILING.replace("[[axes]]", "points_per_part = 1\n\n[[axes]]")
    sweep = load_sweep(write(tmp_path, one_per_part))
    out = tmp_path / "out"
    run_sweep(sweep, out, workers=0)
    (out / "parts" / f"part-{recomputed:06d}.parquet").unlink()
    outcome = run_sweep(sweep, out, workers=0, resume=True)
    assert gc.isenabled()
    table = read_results(out)
    errors = table.filter(pc.is_valid(table["error"]))["error"].to_pylist()
    assert (outcome.resumed, outcome.computed) == (1, 1)
    assert (outcome.rows, outcome.failed, outcome.first_error) == (4, 1, errors[0])
    assert "api.route_cached_ms (3.0) must be <= api.route_ms (2.0)" in errors[0]
