"""Smoke test of the sweep benchmark at tiny sizes: structure only, never timing."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.sweep_bench import main


def test_the_quick_analytic_benchmark_reports_rates_and_ratios(tmp_path: Path, capsys) -> None:
    output = tmp_path / "sweep.json"
    results = main(["--quick", "--skip-des", "--output", str(output)])
    analytic = results["analytic"]
    assert analytic["points"] == 128
    for key in ("engine", "sweep"):
        vectorized = analytic[f"{key}_vectorized_points_per_s"]
        point = analytic[f"{key}_point_by_point_points_per_s"]
        assert vectorized > 0 and point > 0
        assert analytic[f"{key}_ratio"] == vectorized / point
    assert "des" not in results
    assert json.loads(output.read_text())["analytic"] == analytic
    assert "points per CPU second" in capsys.readouterr().out
