"""The ``sweep`` and ``plot`` commands.

Dask, pyarrow and matplotlib are imported when a command runs, not when the
command line starts, so ``loopbudget run`` stays quick.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import click

from models.assignments import parse_assignment
from models.errors import ScenarioError
from models.loading import validate
from sim.analysis.estimates import check_run
from sim.analysis.run import Engine
from sim.analysis.workers_need import worker_share
from sim.cli.numbers import FLOAT, INT
from sim.cli.output import check_writable, write_output
from sim.cli.progress import quiet_option

FAILED_POINTS = 1
"""Exit code when the sweep finished but some points failed (bad input is 2)."""


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="results directory: Parquet parts (readable as one dataset), the sweep file, a manifest",
)
@click.option(
    "--workers",
    type=INT,
    default=None,
    help="local Dask worker processes; 0 runs in this process (default: 0 for an analytic "
    "sweep, one per core for a DES sweep)",
)
@click.option(
    "--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://host:8786"
)
@click.option("--resume", is_flag=True, help="run only the points missing from --out")
@quiet_option
def sweep(
    file: Path, out: Path, workers: int | None, scheduler: str | None, resume: bool, quiet: bool
) -> None:
    """Run the parameter sweep FILE (TOML) and write its results to --out as Parquet.

    An analytic sweep runs in this process unless --workers or --scheduler asks for Dask;
    a DES sweep runs on a local Dask cluster.
    """
    from sim.sweep.cluster import check_address, check_workers
    from sim.sweep.execute import default_sweep_workers, run_sweep
    from sim.sweep.sweepfile import load_sweep

    if workers is not None and scheduler is not None:
        raise ScenarioError("--workers and --scheduler: give one of them, not both")
    loaded = load_sweep(file)
    if workers is None and scheduler is None:
        workers = default_sweep_workers(loaded)
    if workers != 0 and importlib.util.find_spec("distributed") is None:
        raise ScenarioError(
            "sweep: this sweep runs on Dask, which is not installed; "
            "pip install 'loopbudget[sweep]', or --workers 0 to run it in this process"
        )
    if scheduler is not None:
        check_address(scheduler)
    base = validate(loaded.base_raw)
    analytic = loaded.file.engine is Engine.ANALYTIC
    needs = [
        check_run(f"{file}: the base point", base, transport, analytic, loaded.file.rollouts)
        for transport in loaded.file.transports
    ]
    check_workers(workers, worker_share(needs))
    outcome = run_sweep(loaded, out, workers, scheduler, resume, show_progress=not quiet)
    unit = "points" if len(loaded.seeds) == 1 else "points x seeds"
    shape = (
        f"{loaded.runs // len(loaded.seeds):,} points x {len(loaded.file.transports)} "
        f"transports x {len(loaded.seeds)} seeds"
    )
    click.echo(f"{loaded.file.name}: {outcome.rows:,} rows ({shape}) in {out}")
    resumed = f", {outcome.resumed:,} already done" if outcome.resumed else ""
    if outcome.damaged:
        resumed += f", {outcome.damaged:,} damaged parts recomputed"
    startup = (
        f" after {outcome.startup_s:.1f} s starting workers" if outcome.startup_s > 0.5 else ""
    )
    click.echo(
        f"ran {outcome.computed:,} {unit} in {outcome.seconds:.2f} s "
        f"({outcome.runs_per_s:,.0f} {unit}/s){startup}{resumed}; {outcome.failed:,} failed"
    )
    if outcome.failed:
        click.echo(
            f"{outcome.failed:,} of {outcome.runs:,} {unit} failed; their rows carry the error, "
            f"e.g. {outcome.first_error}",
            err=True,
        )
        sys.exit(FAILED_POINTS)


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--x", "x", metavar="PATH", help="swept path on the horizontal axis")
@click.option(
    "--y",
    "y",
    metavar="METRIC",
    help="result column, e.g. e2e_s_mean, budget_s_decode (default: e2e_reduction if present)",
)
@click.option("--hue", metavar="PATH", help="swept path: one line per value, or the heat map's y")
@click.option(
    "--kind",
    type=click.Choice(["line", "heatmap", "tornado"]),
    default="line",
    show_default=True,
    help="line: y against x with 95% bands; heatmap: y as colour over x and hue; "
    "tornado: one-at-a-time sensitivity",
)
@click.option(
    "--transport", "transports", multiple=True, help="transports to show (default: all with y)"
)
@click.option(
    "--where", "wheres", multiple=True, metavar="PATH=VALUE", help="keep rows with this value"
)
@click.option("--mark", "marks", multiple=True, type=FLOAT, help="mark and annotate x = VALUE")
@click.option("--contour", "contours", multiple=True, type=FLOAT, help="heat map contour level")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="figure path without suffix; FILE.png and FILE.svg are written (default: in DIRECTORY)",
)
def plot(
    directory: Path,
    x: str | None,
    y: str | None,
    hue: str | None,
    kind: str,
    transports: tuple[str, ...],
    wheres: tuple[str, ...],
    marks: tuple[float, ...],
    contours: tuple[float, ...],
    out: Path | None,
) -> None:
    """Plot sweep results from DIRECTORY as PNG and SVG."""
    from sim.sweep.labels import default_metric
    from sim.sweep.plots import figure_paths, heat_map, line_plot, save, tornado
    from sim.sweep.results_table import Results

    for option, values in (("--mark", marks), ("--contour", contours)):
        for value in values:
            if not math.isfinite(value):
                raise ScenarioError(f"{option} = {value}: must be a finite number")
    results = Results.load(directory)
    metric = y or default_metric(results.table.column_names)
    where = dict(_where(text) for text in wheres)
    if kind == "tornado":
        figure = tornado(results, metric, where, transports)
    elif x is None:
        raise ScenarioError(f"--kind {kind}: needs --x PATH (swept: {', '.join(results.axes)})")
    elif kind == "line":
        figure = line_plot(results, x, metric, hue, where, transports, marks)
    elif hue is None:
        raise ScenarioError("--kind heatmap: needs --hue PATH for the vertical axis")
    else:
        figure = heat_map(results, x, hue, metric, where, transports, contours)
    name = "-".join(filter(None, [kind, metric, x, hue]))
    base = directory / re.sub(r"[^A-Za-z0-9_-]+", "_", name) if out is None else _strip(out)
    for path in figure_paths(base):
        if path.parent.is_dir():
            check_writable(path, "--out")
    for path in write_output(base, "--out", lambda target: save(figure, target)):
        click.echo(str(path))


def _where(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise ScenarioError(f"--where {text!r}: expected PATH=VALUE, e.g. network.rtt_ms=30")
    return parse_assignment(text, "--where")


def _strip(path: Path) -> Path:
    return path.with_suffix("") if path.suffix in (".png", ".svg") else path
