"""Figures from a results directory: line plots with confidence bands, heat maps, tornados.

Plots only read results.  Rows that failed are left out.  Every swept path
that is neither on an axis nor the hue must take a single value among the
plotted rows (fix it with ``where``), so no point is silently averaged with
another.  Bands are ``sim.sweep.bands``'s.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, PercentFormatter

from models.errors import ScenarioError
from sim.sweep.bands import aggregate
from sim.sweep.labels import is_reduction, metric_label, parameter_label, unit
from sim.sweep.results_table import Results
from sim.sweep.rows import TRANSPORT

BAND_ALPHA = 0.25


def line_plot(
    results: Results,
    x: str,
    y: str,
    hue: str | None = None,
    where: dict[str, Any] | None = None,
    transports: tuple[str, ...] = (),
    marks: tuple[float, ...] = (),
) -> Figure:
    """``y`` against swept path ``x``: one line per transport (and hue value), with bands."""
    table = results.select(y, where or {}, transports)
    _require_axis(results, x, "--x")
    if hue is not None:
        _require_axis(results, hue, "--hue")
    table = table.filter(pc.is_valid(table[x]))
    results.check_fixed(table, (x, hue))
    figure = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = figure.add_subplot()
    keys = [TRANSPORT, hue] if hue else [TRANSPORT]
    series = _groups(table, keys)
    colours = _colours(len(series))
    for colour, (key, rows) in zip(colours, series.items(), strict=True):
        xs, mean, low, high = aggregate(rows, x, y)
        label = key[0] if hue is None else f"{key[0]}, {hue} = {_short(key[1])}"
        ax.plot(xs, mean, color=colour, label=label, marker="o" if xs.size <= 12 else None)
        if low is not None and high is not None:
            ax.fill_between(xs, low, high, color=colour, alpha=BAND_ALPHA, linewidth=0)
        for mark in marks:
            _annotate(ax, xs, mean, mark, colour, is_reduction(y), results.is_log(x))
    for mark in marks:
        ax.axvline(mark, color="0.4", linestyle="--", linewidth=0.8)
    _scale(ax, "x", results.is_log(x))
    _label_y(ax, results, y, table)
    ax.set_xlabel(parameter_label(x))
    ax.set_title(_title(results), fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    return figure


def heat_map(
    results: Results,
    x: str,
    y_axis: str,
    metric: str,
    where: dict[str, Any] | None = None,
    transports: tuple[str, ...] = (),
    contours: tuple[float, ...] = (),
) -> Figure:
    """``metric`` (mean over seeds) as colour over swept paths ``x`` and ``y_axis``."""
    table = results.select(metric, where or {}, transports)
    _require_axis(results, x, "--x")
    _require_axis(results, y_axis, "--hue")
    chosen = sorted(set(table[TRANSPORT].to_pylist()))
    if len(chosen) != 1:
        raise ScenarioError(f"heat map: pick one transport with --transport (found {chosen})")
    table = table.filter(pc.and_(pc.is_valid(table[x]), pc.is_valid(table[y_axis])))
    results.check_fixed(table, (x, y_axis))
    xs = np.unique(table[x].to_numpy(zero_copy_only=False))
    ys = np.unique(table[y_axis].to_numpy(zero_copy_only=False))
    total = np.zeros((ys.size, xs.size))
    count = np.zeros((ys.size, xs.size))
    column = np.searchsorted(xs, table[x].to_numpy(zero_copy_only=False))
    row = np.searchsorted(ys, table[y_axis].to_numpy(zero_copy_only=False))
    np.add.at(total, (row, column), table[metric].to_numpy(zero_copy_only=False))
    np.add.at(count, (row, column), 1)
    with np.errstate(invalid="ignore"):
        grid = np.ma.masked_invalid(total / count)
    figure = Figure(figsize=(7.5, 5), layout="constrained")
    ax = figure.add_subplot()
    mesh = ax.pcolormesh(
        _edges(xs, results.is_log(x)),
        _edges(ys, results.is_log(y_axis)),
        grid,
        cmap="viridis",
        rasterized=True,
    )
    bar = figure.colorbar(mesh, ax=ax)
    bar.set_label(metric_label(metric, chosen[0], results.baseline))
    percent = is_reduction(metric)
    if percent:
        bar.formatter = PercentFormatter(1.0, decimals=0)
        bar.update_ticks()
    if contours and xs.size > 1 and ys.size > 1:
        lines = ax.contour(xs, ys, grid, levels=sorted(contours), colors="white", linewidths=1.2)
        ax.clabel(lines, fmt=(lambda v: f"{v:.0%}") if percent else "%.3g", fontsize=8)
    _scale(ax, "x", results.is_log(x))
    _scale(ax, "y", results.is_log(y_axis))
    ax.set_xlabel(parameter_label(x))
    ax.set_ylabel(parameter_label(y_axis))
    ax.set_title(_title(results), fontsize=10)
    return figure


def tornado(
    results: Results,
    metric: str,
    where: dict[str, Any] | None = None,
    transports: tuple[str, ...] = (),
) -> Figure:
    """One-at-a-time sensitivity: ``metric`` at each axis's lowest and highest value.

    Needs a one-at-a-time sweep: the base point (no axis set) and points that
    set a single axis.  Bars start at the base value; the widest is on top.
    """
    table = results.select(metric, where or {}, transports)
    chosen = sorted(set(table[TRANSPORT].to_pylist()))
    if len(chosen) != 1:
        raise ScenarioError(f"tornado: pick one transport with --transport (found {chosen})")
    assigned = np.zeros(table.num_rows, dtype=int)
    for axis in results.axes:
        assigned += pc.is_valid(table[axis]).to_numpy(zero_copy_only=False)
    base_rows = table.filter(pa.array(assigned == 0))
    if base_rows.num_rows == 0:
        raise ScenarioError("tornado: no base point; run the sweep with design = 'one-at-a-time'")
    base = float(np.mean(base_rows[metric].to_numpy(zero_copy_only=False)))
    bars = []
    for axis in results.axes:
        chosen_alone = (assigned == 1) & pc.is_valid(table[axis]).to_numpy(zero_copy_only=False)
        alone = table.filter(pa.array(chosen_alone))
        if alone.num_rows == 0:
            continue
        values, mean, _, _ = aggregate(alone, axis, metric)
        bars.append((axis, values[0], values[-1], mean[0], mean[-1]))
    bars.sort(key=lambda bar: abs(bar[4] - bar[3]))
    figure = Figure(figsize=(8, 0.42 * len(bars) + 1.6), layout="constrained")
    ax = figure.add_subplot()
    for position, (*_, at_low, at_high) in enumerate(bars):
        ax.barh(position, at_low - base, left=base, color="#4e79a7", height=0.6)
        ax.barh(position, at_high - base, left=base, color="#f28e2b", height=0.6)
    ax.set_yticks(
        range(len(bars)),
        [f"{a}\n{_short(lo)} → {_short(hi)} {unit(a) or ''}" for a, lo, hi, *_ in bars],
        fontsize=8,
    )
    ax.axvline(base, color="black", linewidth=1)
    percent = is_reduction(metric)
    ax.set_xlabel(metric_label(metric, chosen[0], results.baseline))
    if percent:
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    base_text = f"{base:.1%}" if percent else f"{base:.3g}"
    ax.set_title(f"{_title(results)}\nbase {base_text}; blue: low value, orange: high", fontsize=9)
    return figure


def save(figure: Figure, base: Path) -> list[Path]:
    """Write ``base``.png and ``base``.svg; return their paths."""
    base.parent.mkdir(parents=True, exist_ok=True)
    paths = [base.parent / f"{base.name}.png", base.parent / f"{base.name}.svg"]
    for path in paths:
        figure.savefig(path, dpi=150)
    return paths


def _groups(table: pa.Table, keys: list[str]) -> dict[tuple[Any, ...], pa.Table]:
    columns = [table[k].to_pylist() for k in keys]
    indices: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for position, key in enumerate(zip(*columns, strict=True)):
        indices[key].append(position)
    return {key: table.take(pa.array(rows)) for key, rows in indices.items()}


def _edges(centres: np.ndarray, log: bool) -> np.ndarray:
    values = np.log(centres) if log else centres.astype(float)
    if values.size == 1:
        edges = np.array([values[0] - 0.5, values[0] + 0.5])
    else:
        middle = (values[1:] + values[:-1]) / 2
        edges = np.concatenate([[2 * values[0] - middle[0]], middle, [2 * values[-1] - middle[-1]]])
    return np.exp(edges) if log else edges


def _annotate(
    ax: Any, xs: np.ndarray, ys: np.ndarray, mark: float, colour: str, percent: bool, log: bool
) -> None:
    if not xs[0] <= mark <= xs[-1]:
        return
    where = np.log(xs) if log else xs
    value = float(np.interp(math.log(mark) if log else mark, where, ys))
    text = f"{value:.1%}" if percent else f"{value:.3g}"
    right_half = (where[-1] - (math.log(mark) if log else mark)) < (where[-1] - where[0]) / 2
    ax.annotate(
        f"{_short(mark)}: {text}",
        (mark, value),
        textcoords="offset points",
        xytext=(-6, 6) if right_half else (6, -12),
        ha="right" if right_half else "left",
        fontsize=8,
        color=colour,
        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none"},
    )
    ax.plot([mark], [value], marker="o", color=colour, markersize=4)


def _scale(ax: Any, which: str, log: bool) -> None:
    """Log axes for log-spaced sweeps, with plain numbers (1,000, not 10^3) as tick labels."""
    if log:
        getattr(ax, f"set_{which}scale")("log")
        axis = ax.xaxis if which == "x" else ax.yaxis
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))


def _label_y(ax: Any, results: Results, y: str, table: pa.Table) -> None:
    chosen = sorted(set(table[TRANSPORT].to_pylist()))
    transport = chosen[0] if len(chosen) == 1 else None
    ax.set_ylabel(metric_label(y, transport, results.baseline))
    if is_reduction(y):
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))


def _title(results: Results) -> str:
    return f"{results.name}: {results.description}" if results.description else results.name


def _colours(count: int) -> list[Any]:
    palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948"]
    if count <= len(palette):
        return palette[:count]
    from matplotlib import colormaps

    return [colormaps["viridis"](i / (count - 1)) for i in range(count)]


def _short(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,.4g}"
    return str(value)


def _require_axis(results: Results, path: str, option: str) -> None:
    if path not in results.axes:
        raise ScenarioError(
            f"{option} = {path!r}: not a swept path; swept: {', '.join(results.axes)}"
        )
