"""The sweep explorer's data: results directories or an uploaded Parquet file, and their plots.

The figures are ``sim.sweep.plots``'s own, so the explorer and ``loopbudget
plot`` draw the same thing from the same rows.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from matplotlib.figure import Figure

from models.errors import ScenarioError
from sim.sweep.manifest import MANIFEST, metadata_path
from sim.sweep.plots import heat_map, line_plot, tornado
from sim.sweep.results_table import Results
from sim.sweep.rows import BASELINE, ERROR, INTEGER_COLUMNS, TRANSPORT

KINDS = ("line", "heat map", "tornado")
RESULTS_ROOT_ENV = "LOOPBUDGET_RESULTS_ROOT"
DEFAULT_RESULTS_ROOT = "results"
"""Where the explorer looks for results directories: ``results/`` of the working directory."""
PNG_DPI = 130


def results_root() -> Path:
    """The one directory the explorer opens results under (``LOOPBUDGET_RESULTS_ROOT``)."""
    return Path(os.environ.get(RESULTS_ROOT_ENV, DEFAULT_RESULTS_ROOT))


def results_dirs(root: Path) -> list[Path]:
    """Sweep results directories directly under ``root`` (those with a manifest)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if metadata_path(p, MANIFEST).is_file())


def inside_root(root: Path, chosen: str) -> Path:
    """``chosen`` as a results directory under ``root``; anywhere else is a one-line error.

    Links are followed before the check, so a link under the root cannot lead out of it.
    """
    path = Path(chosen)
    if not path.resolve().is_relative_to(root.resolve()):
        raise ScenarioError(
            f"results directory {chosen!r}: outside {root}/, the only directory the explorer "
            f"opens (set {RESULTS_ROOT_ENV} to serve another)"
        )
    return path


def results_from_parquet(file_name: str, content: bytes) -> Results:
    """Rows of an uploaded Parquet file; swept paths are the dotted column names."""
    try:
        table = pq.read_table(io.BytesIO(content))
    except (pa.ArrowException, OSError) as error:
        raise ScenarioError(f"{file_name}: not a Parquet file of sweep rows ({error})") from None
    if TRANSPORT not in table.column_names:
        raise ScenarioError(f"{file_name}: no {TRANSPORT!r} column; not sweep rows")
    if table.num_rows == 0:
        raise ScenarioError(f"{file_name}: no rows; nothing to plot")
    if not pa.types.is_string(table.schema.field(TRANSPORT).type):
        raise ScenarioError(f"{file_name}: the {TRANSPORT!r} column is not text; not sweep rows")
    if ERROR not in table.column_names:
        table = table.append_column(ERROR, pa.nulls(table.num_rows, pa.string()))
    baselines = (
        set(table[BASELINE].drop_null().to_pylist()) if BASELINE in table.column_names else set()
    )
    return Results(
        table=table,
        name=file_name,
        description="",
        axes=tuple(c for c in table.column_names if "." in c),
        scales={},
        transports=tuple(dict.fromkeys(table[TRANSPORT].drop_null().to_pylist())),
        baseline=next(iter(baselines)) if len(baselines) == 1 else None,
    )


def metric_columns(results: Results) -> list[str]:
    """Numeric result columns that can go on the y axis (not swept paths or run indices)."""
    skip = {*results.axes, *INTEGER_COLUMNS}
    return [
        field.name
        for field in results.table.schema
        if field.name not in skip and pa.types.is_floating(field.type)
    ]


def free_axes(
    results: Results, shown: tuple[str | None, ...], transports: tuple[str, ...]
) -> dict[str, list[Any]]:
    """Swept paths not on the plot that take several values: each must be fixed to one.

    A one-at-a-time sweep leaves an axis null at its base value; nulls are not offered.
    """
    table = results.table.filter(pc.is_null(results.table[ERROR]))
    table = table.filter(pc.is_in(table[TRANSPORT], value_set=pa.array(list(transports))))
    free = {}
    for axis in results.axes:
        if axis in shown:
            continue
        values = sorted({v for v in table[axis].to_pylist() if v is not None})
        if len(values) > 1:
            free[axis] = values
    return free


def sweep_figure(
    results: Results,
    kind: str,
    x: str | None,
    y: str,
    hue: str | None,
    where: dict[str, Any],
    transports: tuple[str, ...],
) -> Figure:
    """The figure ``loopbudget plot`` would draw; a bad choice raises a one-line ScenarioError."""
    if kind not in ("line", "heat map"):
        return tornado(results, y, where, transports)
    if x is None:
        raise ScenarioError(f"{kind}: pick a swept path for the horizontal axis")
    if kind == "line":
        return line_plot(results, x, y, hue, where, transports)
    if hue is None:
        raise ScenarioError("heat map: pick a second swept path for the vertical axis")
    return heat_map(results, x, hue, y, where, transports)


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=PNG_DPI)
    return buffer.getvalue()


def svg_bytes(figure: Figure) -> bytes:
    """The figure as SVG."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="svg")
    return buffer.getvalue()


def default_kind(results: Results) -> str:
    """The plot a sweep was made for: a tornado for a one-at-a-time sweep (every row
    moves at most one axis off its base value), else a line."""
    rows = results.table.select(list(results.axes)).to_pylist()
    one_at_a_time = len(results.axes) > 1 and all(
        sum(value is not None for value in row.values()) <= 1 for row in rows
    )
    return "tornado" if one_at_a_time else "line"
