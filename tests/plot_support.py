"""Helpers shared by the plot tests: rows of a results table, and the data a figure draws."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection, QuadMesh

from sim.sweep.store import read_results


def rows(
    directory: Path, transport: str, where: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The successful rows of one transport whose columns equal ``where`` (path -> value)."""
    wanted = where or {}
    return [
        row
        for row in read_results(directory).to_pylist()
        if row["error"] is None
        and row["transport"] == transport
        and all(row[column] == value for column, value in wanted.items())
    ]


def by_x(selected: list[dict[str, Any]], x: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    """Distinct x values (sorted) and the mean of ``y`` over the rows at each."""
    groups: dict[float, list[float]] = defaultdict(list)
    for row in selected:
        groups[row[x]].append(row[y])
    xs = sorted(groups)
    return np.array(xs, dtype=float), np.array([np.mean(groups[v]) for v in xs])


def lines(ax: Axes) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The labelled lines of a plot (the legend's entries): label -> (x, y)."""
    return {
        line.get_label(): (np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float))
        for line in ax.lines
        if not line.get_label().startswith("_")
    }


def bands(ax: Axes) -> list[dict[float, tuple[float, float]]]:
    """Each filled band of a line plot, in drawing order: x -> (low, high)."""
    found = []
    for collection in ax.collections:
        if not isinstance(collection, PolyCollection):
            continue
        edges: dict[float, list[float]] = defaultdict(list)
        for x, y in collection.get_paths()[0].vertices:
            edges[float(x)].append(float(y))
        found.append({x: (min(ys), max(ys)) for x, ys in edges.items()})
    return found


def cells(ax: Axes) -> np.ndarray:
    """The colour values of a heat map: rows along the vertical axis, columns along the
    horizontal one, both in increasing order."""
    mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
    return np.ma.filled(mesh.get_array(), np.nan)


def bars(ax: Axes) -> list[tuple[float, float, float]]:
    """The horizontal bars from bottom to top: (vertical centre, left end, length)."""
    return [
        (patch.get_y() + patch.get_height() / 2, patch.get_x(), patch.get_width())
        for patch in ax.patches
    ]


def assert_written(paths: list[Path]) -> None:
    """Smoke check beside the data checks: a PNG and an SVG were written."""
    assert [p.suffix for p in paths] == [".png", ".svg"]
    png, svg = paths
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "<svg" in svg.read_text()[:1000]
