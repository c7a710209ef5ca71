"""``run`` and ``compare --out FILE``: the records written, read back, equal the run's own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support import CliResult, assert_one_line_error

from models.stages import POOLS, STAGES
from sim.analysis.run import Engine, execute, load, parse_spec
from sim.report.export import read_records

Cli = Callable[..., CliResult]
ROLLOUTS = 6


def simulated(spec_text: str):
    spec = parse_spec(spec_text)
    return execute(spec, load(spec), Engine.DES, ROLLOUTS, keep_turns=True)


def assert_rollouts_equal(table, records, side: str) -> None:
    rows = table.filter(np.array(table["side"].to_pylist()) == side)
    assert rows.num_rows == records.count
    np.testing.assert_allclose(rows["e2e_s"].to_numpy(), records.e2e_s, rtol=1e-12)
    assert rows["turns"].to_pylist() == records.turns.astype(int).tolist()
    np.testing.assert_allclose(
        rows["ttft_mean_s"].to_numpy(), records.ttft_sum_s / records.turns, rtol=1e-12
    )
    for column, stage in enumerate(STAGES):
        np.testing.assert_allclose(
            rows[f"{stage.value}_s"].to_numpy(), records.stage_s[:, column], rtol=1e-12, atol=0
        )
    for column, pool in enumerate(POOLS):
        np.testing.assert_allclose(
            rows[f"wait_{pool.value}_s"].to_numpy(), records.pool_wait_s[:, column], atol=0
        )


def assert_turns_equal(table, turns, side: str) -> None:
    rows = table.filter(np.array(table["side"].to_pylist()) == side)
    assert rows["rollout"].to_pylist() == turns.rollout.tolist()
    assert rows["turn"].to_pylist() == turns.turn_index.tolist()
    assert rows["new_connection"].to_pylist() == turns.cold.astype(bool).tolist()
    np.testing.assert_allclose(rows["start_at_s"].to_numpy(), turns.start_at_s, rtol=1e-12)
    np.testing.assert_allclose(rows["ttft_s"].to_numpy(), turns.ttft_s, rtol=1e-12)
    for column, stage in enumerate(STAGES):
        np.testing.assert_allclose(
            rows[f"{stage.value}_s"].to_numpy(), turns.stage_s[:, column], rtol=1e-12, atol=0
        )


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".json"])
def test_compare_out_round_trips_both_sides(cli: Cli, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"records{suffix}"
    specs = ("codex-spark:http", "codex-spark:ws")
    result = cli("compare", *specs, "-n", str(ROLLOUTS), "--out", str(path))
    assert result.exit_code == 0, result.stderr
    assert f"wrote {path}" in result.stderr
    tables = read_records(path)
    for side, spec in zip("ab", specs, strict=True):
        run = simulated(spec)
        assert_rollouts_equal(tables.rollouts, run.records, side)
        assert_turns_equal(tables.turns, run.records.turn_records, side)
    assert set(tables.rollouts["spec"].to_pylist()) == set(specs)


def test_run_out_writes_rollouts_and_turns_beside_them(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "ws.csv"
    result = cli("run", "codex-spark:ws", "-n", str(ROLLOUTS), "--out", str(path))
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "ws.turns.csv").is_file()
    tables = read_records(path)
    run = simulated("codex-spark:ws")
    assert_rollouts_equal(tables.rollouts, run.records, "codex-spark:ws")
    assert_turns_equal(tables.turns, run.records.turn_records, "codex-spark:ws")
    assert tables.rollouts["seed"].to_pylist() == [run.scenario.seed] * ROLLOUTS


def test_the_budget_is_the_mean_of_the_exported_rollouts(cli: Cli, tmp_path: Path) -> None:
    """What ``--json`` reports is what the exported rows give."""
    import json

    path = tmp_path / "r.parquet"
    args = ("run", "codex-spark:http", "-n", str(ROLLOUTS), "--out", str(path), "--json")
    summary = json.loads(cli(*args).stdout)
    rollouts = read_records(path).rollouts
    for stage in STAGES:
        column = rollouts[f"{stage.value}_s"].to_numpy()
        assert column.mean() == pytest.approx(summary["budget_s"][stage.value], rel=1e-12)
    assert rollouts["scenario_hash"][0].as_py() == summary["scenario_hash"]


@pytest.mark.parametrize(
    ("args", "mentions"),
    [
        (["--engine", "analytic", "--out", "x.csv"], ["--out", "des"]),
        (["--out", "x.xlsx"], ["--out", ".xlsx", ".parquet"]),
    ],
    ids=["analytic", "unknown suffix"],
)
def test_bad_out_is_one_line(cli: Cli, args: list[str], mentions: list[str]) -> None:
    assert_one_line_error(cli("run", "codex-spark", "-n", "2", *args), *mentions)
