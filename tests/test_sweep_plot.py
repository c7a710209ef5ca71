"""The plot command: every kind of figure as non-empty PNG and SVG, bands, and bad input."""

from __future__ import annotations

import runpy
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from sim.sweep.bands import aggregate
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep

SWEEPS = Path(__file__).resolve().parent.parent / "sweeps"
GRID = """
name = "grid"
description = "reduction over decode speed and tool calls"
base = "codex-spark"
transports = ["http", "ws"]

[[axes]]
path = "inference.decode_tps"
start = 50.0
stop = 4000.0
num = 6
scale = "log"

[[axes]]
path = "workload.tool_calls_per_rollout"
values = [5, 20, 40]
"""
SEEDS = """
name = "seeds"
base = "codex-spark"
transports = ["http", "ws"]
engine = "des"
rollouts = 6
replications = 3

[[axes]]
path = "network.rtt_ms"
values = [10.0, 100.0]
"""
ONE_AT_A_TIME = """
name = "oat"
base = "codex-spark"
transports = ["http", "ws"]
design = "one-at-a-time"

[[axes]]
path = "network.rtt_ms"
values = [15.0, 60.0]

[[axes]]
path = "api.post_fixed_ms"
values = [12.5, 50.0]
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Results directories of three small sweeps, one per plot kind."""
    root = tmp_path_factory.mktemp("plots")
    out = {}
    for name, text in (("grid", GRID), ("seeds", SEEDS), ("oat", ONE_AT_A_TIME)):
        source = root / f"{name}.toml"
        source.write_text(textwrap.dedent(text))
        run_sweep(load_sweep(source), root / name, workers=0)
        out[name] = root / name
    return out


def assert_images(paths: list[Path]) -> None:
    assert [p.suffix for p in paths] == [".png", ".svg"]
    png, svg = paths
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 5000
    assert "<svg" in svg.read_text()[:1000] and svg.stat().st_size > 5000


def written(stdout: str) -> list[Path]:
    return [Path(line) for line in stdout.splitlines()]


@pytest.mark.parametrize(
    "name, arguments",
    [
        (
            "grid",
            [
                "--x",
                "inference.decode_tps",
                "--hue",
                "workload.tool_calls_per_rollout",
                "--mark",
                "1000",
            ],
        ),
        (
            "grid",
            [
                "--x",
                "inference.decode_tps",
                "--y",
                "budget_s_decode",
                "--where",
                "workload.tool_calls_per_rollout=20",
            ],
        ),
        (
            "grid",
            [
                "--kind",
                "heatmap",
                "--x",
                "inference.decode_tps",
                "--hue",
                "workload.tool_calls_per_rollout",
                "--contour",
                "0.3",
            ],
        ),
        ("seeds", ["--x", "network.rtt_ms", "--y", "e2e_s_mean"]),
        ("oat", ["--kind", "tornado"]),
    ],
    ids=["line-hue-mark", "line-where", "heatmap", "line-seed-bands", "tornado"],
)
def test_each_plot_kind_writes_png_and_svg(
    results: dict[str, Path], tmp_path: Path, cli, name: str, arguments: list[str]
) -> None:
    result = cli("plot", str(results[name]), *arguments, "--out", str(tmp_path / "figure.png"))
    assert result.exit_code == 0, result.stderr
    assert written(result.stdout) == [tmp_path / "figure.png", tmp_path / "figure.svg"]
    assert_images(written(result.stdout))


def test_the_default_figure_goes_into_the_results_directory(results, cli) -> None:
    result = cli(
        "plot",
        str(results["grid"]),
        "--x",
        "inference.decode_tps",
        "--where",
        "workload.tool_calls_per_rollout=40",
    )
    assert result.exit_code == 0, result.stderr
    paths = written(result.stdout)
    assert all(p.parent == results["grid"] for p in paths)
    assert_images(paths)


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (["--x", "inference.decode_tps", "--y", "e2e_speed"], "--y = 'e2e_speed': no such column"),
        (["--x", "network.rtt_ms"], "--x = 'network.rtt_ms': not a swept path"),
        (["--x", "inference.decode_tps"], "workload.tool_calls_per_rollout takes 3 values"),
        (["--kind", "heatmap", "--x", "inference.decode_tps"], "needs --hue PATH"),
        (["--kind", "line"], "needs --x PATH"),
        (["--kind", "pie", "--x", "inference.decode_tps"], "'pie' is not one of"),
        (
            [
                "--x",
                "inference.decode_tps",
                "--transport",
                "grpc",
                "--hue",
                "workload.tool_calls_per_rollout",
            ],
            "--transport = 'grpc': not in this sweep",
        ),
        (
            ["--x", "inference.decode_tps", "--where", "workload.tool_calls_per_rollout"],
            "--where 'workload.tool_calls_per_rollout': expected PATH=VALUE",
        ),
        (["--kind", "tornado"], "no base point"),
    ],
)
def test_bad_plot_requests_exit_2_in_one_line(
    results: dict[str, Path], cli, arguments: list[str], expected: str
) -> None:
    result = cli("plot", str(results["grid"]), *arguments)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and expected in result.stderr, result.stderr


def test_a_directory_without_results_exits_2(tmp_path: Path, cli) -> None:
    result = cli("plot", str(tmp_path), "--x", "network.rtt_ms")
    assert result.exit_code == 2 and "not a sweep results directory" in result.stderr


def test_bands_over_seeds_are_t_intervals_of_the_mean() -> None:
    rows = pa.table({"x": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], "y": [1.0, 2.0, 4.0, 5.0, 5.0, 8.0]})
    xs, mean, low, high = aggregate(rows, "x", "y")
    assert list(xs) == [1.0, 2.0]
    assert list(mean) == pytest.approx([7 / 3, 6.0])
    half = stats.t.ppf(0.975, 2) * np.array([np.std([1, 2, 4], ddof=1), np.std([5, 5, 8], ddof=1)])
    assert list(high - mean) == pytest.approx(list(half / np.sqrt(3)))
    assert list(mean - low) == pytest.approx(list(half / np.sqrt(3)))


def test_one_seed_uses_the_runs_own_interval_and_the_analytic_engine_has_none() -> None:
    des = pa.table(
        {"x": [2.0, 1.0], "y_mean": [5.0, 3.0], "y_ci95_low": [4.0, 2.5], "y_ci95_high": [6.0, 3.5]}
    )
    _, mean, low, high = aggregate(des, "x", "y_mean")
    assert list(mean) == [3.0, 5.0] and list(low) == [2.5, 4.0] and list(high) == [3.5, 6.0]
    analytic = pa.table(
        {
            "x": [1.0, 2.0],
            "y_mean": [3.0, 5.0],
            "y_ci95_low": [None, None],
            "y_ci95_high": [None, None],
        }
    )
    assert aggregate(analytic, "x", "y_mean")[2] is None


@pytest.mark.parametrize("script", ["amdahl", "turns_x_decode", "tornado"])
def test_each_question_script_produces_its_figure(tmp_path: Path, script: str) -> None:
    module = runpy.run_path(str(SWEEPS / f"{script}.py"))
    paths = module["main"](["--out", str(tmp_path / "results"), "--figure", str(tmp_path / script)])
    assert paths == [tmp_path / f"{script}.png", tmp_path / f"{script}.svg"]
    assert_images(paths)
