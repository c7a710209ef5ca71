"""Smoke test of the sweep benchmark at tiny sizes: structure only, never timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.sweep_bench import main


@pytest.mark.slow
def test_the_quick_analytic_benchmark_reports_rates_and_ratios(tmp_path: Path, capsys) -> None:
    output = tmp_path / "sweep.json"
    results = main(["--quick", "--skip-des", "--output", str(output)])
    analytic = results["analytic"]
    assert analytic["points"] == 128 and analytic["distinct_points"] == 100
    assert analytic["column_form_points_per_s"] > 0
    assert analytic["rotating_ws_engine_points_per_s"] > 0
    for transport, rates in analytic["per_transport_points_per_s"].items():
        assert set(rates) == {"engine", "batched", "point_by_point"}
        assert all(rate > 0 for rate in rates.values())
        assert analytic["engine_ratio"][transport] == rates["engine"] / rates["point_by_point"]
    assert set(analytic["per_transport_points_per_s"]) == {"http", "ws"}
    batched, point = (
        analytic["sweep_batched_points_per_s"],
        analytic["sweep_point_by_point_points_per_s"],
    )
    assert analytic["sweep_ratio"] == batched / point
    assert "des" not in results
    assert json.loads(output.read_text())["analytic"] == analytic
    assert "points per CPU second" in capsys.readouterr().out
