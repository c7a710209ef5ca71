"""The three question scripts of sweeps/: each figure draws its sweep's rows, and the rows
say what docs/sweeps.md reads from them (Amdahl: the reduction grows with decode speed;
the heat map: with tool calls too; the tornado: tool calls swing it most)."""

from __future__ import annotations

import math
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes
from plot_support import assert_written, bars, by_x, cells, lines, rows

from models.loading import load_scenario
from sim.analysis.flagship import flagship_reduction
from sim.analytic.agent.engine import expect
from sim.sweep.results_table import Results
from sim.turn.transports import Transport

SWEEPS = Path(__file__).resolve().parent.parent / "sweeps"
DECODE, CALLS = "inference.decode_tps", "workload.tool_calls_per_rollout"


def script(name: str) -> dict[str, Any]:
    return runpy.run_path(str(SWEEPS / f"{name}.py"))


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Axes, Path]]:
    """Each script's figure (its first axes) and its results directory."""
    root = tmp_path_factory.mktemp("questions")
    out = {}
    for name in ("amdahl", "turns_x_decode", "tornado"):
        figure = script(name)["figure"](root / name)
        out[name] = (figure.axes[0], root / name)
    return out


@pytest.mark.slow
def test_the_amdahl_curve_is_the_ws_rows_and_rises_with_decode_speed(drawn) -> None:
    ax, directory = drawn["amdahl"]
    xs, ys = by_x(rows(directory, "ws"), DECODE, "e2e_reduction")
    assert xs.size == 100, "97 log-spaced speeds and the three marked ones"
    np.testing.assert_allclose(lines(ax)["ws"], [xs, ys], rtol=1e-12)
    assert np.all(np.diff(ys) > 0)
    at_65 = ys[list(xs).index(65.0)]
    scenario = load_scenario("codex-spark", ["inference.decode_tps=65.0"])
    http, ws = (expect(scenario, t).e2e_s for t in (Transport.HTTP, Transport.WS))
    assert at_65 == pytest.approx(1 - ws / http, rel=1e-9), "a plotted point is the model's"
    marks = {t.xy[0]: t.get_text() for t in ax.texts if t.get_text()[0].isdigit()}
    assert marks == {m: f"{m:,.0f}: {ys[list(xs).index(m)]:.1%}" for m in (65.0, 1000.0, 4000.0)}
    assert marks[65.0] == f"65: {flagship_reduction():.1%}", "the flagship case, as quoted"
    published = [line for line in ax.lines if list(line.get_ydata()) == [0.40, 0.40]]
    assert len(published) == 1, "the vendor's 40% is drawn as a horizontal line"


def test_the_heat_map_cells_are_the_rows_and_grow_with_decode_speed_and_turns(drawn) -> None:
    ax, directory = drawn["turns_x_decode"]
    ws = rows(directory, "ws")
    calls = sorted({r[CALLS] for r in ws})
    speeds = sorted({r[DECODE] for r in ws})
    grid = cells(ax)
    assert grid.shape == (len(calls), len(speeds)) == (40, 48)
    table = np.full(grid.shape, np.nan)
    for r in ws:
        table[calls.index(r[CALLS]), speeds.index(r[DECODE])] = r["e2e_reduction"]
    np.testing.assert_allclose(grid, table, rtol=1e-12)
    assert np.all(np.diff(grid, axis=1) > 0), "faster decode, larger reduction"
    assert np.all(np.diff(grid, axis=0) > 0), "more tool calls, larger reduction"
    (contour,) = [c for c in ax.collections if hasattr(c, "levels")]
    assert list(contour.levels) == [0.2, 0.3, 0.4]
    below_20 = grid[np.array(calls) < 20]
    assert below_20.max() < 0.40, "below 20 tool calls the 40% is out of reach"


def test_the_tornado_bars_are_the_one_at_a_time_rows_with_tool_calls_on_top(drawn) -> None:
    ax, directory = drawn["tornado"]
    ws = rows(directory, "ws")
    axes = list(Results.load(directory).axes)
    (base,) = [r["e2e_reduction"] for r in ws if all(r[a] is None for a in axes)]
    swing = {}
    for axis in axes:
        alone = sorted((r[axis], r["e2e_reduction"] - base) for r in ws if r[axis] is not None)
        swing[axis] = [delta for _, delta in alone]
    order = sorted(axes, key=lambda a: abs(swing[a][1] - swing[a][0]))
    lengths = [length for _, _, length in bars(ax)]
    np.testing.assert_allclose(lengths, [d for a in order for d in swing[a]], rtol=1e-12)
    assert order[-1] == CALLS
    assert swing[CALLS][0] < 0 < swing[CALLS][1]
    preset = load_scenario("codex-spark")
    http_s, ws_s = (expect(preset, t).e2e_s for t in (Transport.HTTP, Transport.WS))
    assert base == pytest.approx(1 - ws_s / http_s, rel=1e-9), "the base point is the preset"


@pytest.mark.slow
def test_each_script_writes_its_figure(drawn, tmp_path: Path) -> None:
    for name, (_, directory) in drawn.items():
        paths = script(name)["main"](["--out", str(directory), "--figure", str(tmp_path / name)])
        assert paths == [tmp_path / f"{name}.png", tmp_path / f"{name}.svg"]
        assert_written(paths)


def test_the_amdahl_marks_interpolate_on_a_log_axis(drawn) -> None:
    ax, directory = drawn["amdahl"]
    xs, ys = by_x(rows(directory, "ws"), DECODE, "e2e_reduction")
    for mark in (65.0, 1000.0, 4000.0):
        (point,) = [line for line in ax.lines if list(line.get_xdata()) == [mark]]
        value = np.interp(math.log(mark), np.log(xs), ys)
        assert point.get_ydata()[0] == pytest.approx(value, rel=1e-12)
