"""The plot command draws the results table: each line's points are the rows' values,
bands are t intervals over seeds, heat-map cells are the rows at their coordinates and
tornado bars run from the base point to each one-at-a-time row; bad input exits 2."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from matplotlib.figure import Figure
from plot_support import assert_written, bands, bars, by_x, cells, lines, rows
from scipy import stats

from sim.sweep import plots
from sim.sweep.bands import aggregate
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep

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


@pytest.fixture
def plot(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Run ``loopbudget plot DIR ARGS... --out FILE`` and return the axes the command drew."""

    def draw(directory: Path, *arguments: str) -> Figure:
        drawn: list[Figure] = []
        original = plots.save

        def keep(figure: Figure, base: Path) -> list[Path]:
            drawn.append(figure)
            return original(figure, base)

        monkeypatch.setattr(plots, "save", keep)
        result = cli("plot", str(directory), *arguments, "--out", str(tmp_path / "figure.png"))
        assert result.exit_code == 0, result.stderr
        written = [Path(line) for line in result.stdout.splitlines()]
        assert written == [tmp_path / "figure.png", tmp_path / "figure.svg"]
        assert_written(written)
        (figure,) = drawn
        return figure.axes[0]

    return draw


DECODE, CALLS, RTT = "inference.decode_tps", "workload.tool_calls_per_rollout", "network.rtt_ms"


def test_each_hue_is_a_line_through_its_rows_and_the_mark_reads_the_line(results, plot) -> None:
    ax = plot(results["grid"], "--x", DECODE, "--hue", CALLS, "--mark", "1000")
    drawn = lines(ax)
    assert set(drawn) == {f"ws, {CALLS} = {n}" for n in (5, 20, 40)}
    curves = {}
    for calls in (5, 20, 40):
        xs, ys = by_x(rows(results["grid"], "ws", {CALLS: calls}), DECODE, "e2e_reduction")
        np.testing.assert_allclose(drawn[f"ws, {CALLS} = {calls}"], [xs, ys], rtol=1e-12)
        curves[calls] = ys
    assert np.all(np.diff(curves[20]) > 0), "faster decode, larger share saved (Amdahl)"
    assert np.all(curves[5] < curves[20]) and np.all(curves[20] < curves[40]), "more turns"
    expected = []
    for calls in (5, 20, 40):
        value = np.interp(math.log(1000.0), np.log(xs), curves[calls])
        expected.append((f"1,000: {value:.1%}", (1000.0, pytest.approx(value, rel=1e-12))))
    assert [(t.get_text(), t.xy) for t in ax.texts] == expected


def test_a_where_line_shows_every_transport_and_decode_is_the_same_on_both(results, plot) -> None:
    ax = plot(results["grid"], "--x", DECODE, "--y", "budget_s_decode", "--where", f"{CALLS}=20")
    drawn = lines(ax)
    assert set(drawn) == {"http", "ws"}
    for transport in ("http", "ws"):
        selected = rows(results["grid"], transport, {CALLS: 20})
        np.testing.assert_allclose(drawn[transport], by_x(selected, DECODE, "budget_s_decode"))
    xs, ys = drawn["http"]
    np.testing.assert_allclose(ys, drawn["ws"][1], rtol=1e-12)
    # 21 turns of lognormal(median 110, sigma 0.7) output tokens at a constant speed:
    # 21 x 110 e^(0.245) = 2,949.7 tokens per rollout, so decode seconds x speed is constant.
    np.testing.assert_allclose(xs * ys, 21 * 110 * math.exp(0.7**2 / 2), rtol=1e-9)


def test_heat_map_cells_are_the_rows_at_their_coordinates(results, plot) -> None:
    ax = plot(
        results["grid"], "--kind", "heatmap", "--x", DECODE, "--hue", CALLS, "--contour", "0.3"
    )
    grid = cells(ax)
    assert grid.shape == (3, 6)
    ws = rows(results["grid"], "ws")
    speeds = sorted({r[DECODE] for r in ws})
    for row in ws:
        j, i = [5, 20, 40].index(row[CALLS]), speeds.index(row[DECODE])
        assert grid[j, i] == pytest.approx(row["e2e_reduction"], rel=1e-12)
    (contour,) = [c for c in ax.collections if hasattr(c, "levels")]
    assert list(contour.levels) == [0.3]


def test_bands_over_seeds_are_drawn_as_t_intervals_of_the_seed_means(results, plot) -> None:
    ax = plot(results["seeds"], "--x", RTT, "--y", "e2e_s_mean")
    drawn, drawn_bands = lines(ax), bands(ax)
    assert list(drawn) == ["http", "ws"] and len(drawn_bands) == 2
    for transport, band in zip(("http", "ws"), drawn_bands, strict=True):
        selected = rows(results["seeds"], transport)
        np.testing.assert_allclose(drawn[transport], by_x(selected, RTT, "e2e_s_mean"))
        for rtt, (low, high) in band.items():
            seeds = [r["e2e_s_mean"] for r in selected if r[RTT] == rtt]
            assert len(seeds) == 3
            half = stats.t.ppf(0.975, 2) * np.std(seeds, ddof=1) / math.sqrt(3)
            assert (low, high) == pytest.approx((np.mean(seeds) - half, np.mean(seeds) + half))
    assert np.all(drawn["http"][1] > drawn["ws"][1])


def test_tornado_bars_run_from_the_base_to_each_one_at_a_time_row(results, plot) -> None:
    ax = plot(results["oat"], "--kind", "tornado")
    ws = rows(results["oat"], "ws")
    (base,) = [r["e2e_reduction"] for r in ws if r[RTT] is None and r["api.post_fixed_ms"] is None]
    swings = {}
    for axis in (RTT, "api.post_fixed_ms"):
        alone = sorted((r[axis], r["e2e_reduction"]) for r in ws if r[axis] is not None)
        swings[axis] = [value - base for _, value in alone]
    order = sorted(swings, key=lambda axis: abs(swings[axis][1] - swings[axis][0]))
    drawn = bars(ax)
    assert [left for _, left, _ in drawn] == pytest.approx([base] * 4)
    for position, axis in enumerate(order):
        low, high = drawn[2 * position], drawn[2 * position + 1]
        assert low[0] == high[0] == position
        assert [low[2], high[2]] == pytest.approx(swings[axis], rel=1e-12)
    labels = [label.get_text().split("\n")[0] for label in ax.get_yticklabels()]
    assert labels == order
    assert swings[RTT][0] > 0 > swings[RTT][1], "a shorter round trip, a larger share saved"


def test_the_default_figure_goes_into_the_results_directory(results, cli) -> None:
    result = cli("plot", str(results["grid"]), "--x", DECODE, "--where", f"{CALLS}=40")
    assert result.exit_code == 0, result.stderr
    paths = [Path(line) for line in result.stdout.splitlines()]
    assert all(p.parent == results["grid"] for p in paths)
    assert_written(paths)


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
