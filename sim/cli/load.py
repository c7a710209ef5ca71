"""``loopbudget load``: latency, throughput and utilization of a fleet at load points."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import click
from rich import box
from rich.console import Console
from rich.table import Table

from models.scenario import Scenario
from models.stages import POOLS, Stage
from sim.analysis.fleet_need import fleet_need
from sim.analysis.fleet_summary import load_point
from sim.analysis.load_curve import load_curve
from sim.analysis.load_points import load_scenarios, parse_points
from sim.analysis.metrics import Metric
from sim.analysis.results import FleetResult, UnmeasuredPoint
from sim.analysis.run import Engine, parse_engine, parse_spec
from sim.analysis.run import load as load_scenario_of
from sim.analysis.workers_need import worker_share
from sim.cli.numbers import INT
from sim.cli.output import json_text
from sim.cli.progress import quiet_option
from sim.report.numbers import readable
from sim.report.progress import progress_bar, replication_progress
from sim.sweep.workers import replication_workers
from sim.turn.transports import Transport

F = TypeVar("F", bound=Callable[..., Any])

POOL_ABBREVIATIONS = {"api": "a", "state_store": "st", "safety": "sf", "inference": "in"}
"""Short pool names, so the table fits 100 columns; a legend under it spells them out."""

TABLE_WIDTH = 100
"""Columns of the table when the output is not a terminal (a terminal gives its own)."""


def workers_options(command: F) -> F:
    """Where replications run: shared by load and capacity."""
    command = click.option(
        "--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://host:8786"
    )(command)
    return click.option(
        "--workers",
        type=INT,
        default=None,
        help="local worker processes for replications (default: one per core; 1: this process)",
    )(command)


@click.command()
@click.argument("spec")
@click.option("--agents", help="closed load points, e.g. 1,10,100,1000")
@click.option("--rates", help="open load points in rollouts per second, e.g. 0.5,1,2")
@click.option(
    "--engine",
    default="des",
    show_default=True,
    help="des (simulation) or analytic (queueing network, instant)",
)
@click.option("--seed", type=INT, default=None, help="root seed (default: the scenario's)")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
@workers_options
@quiet_option
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def load(
    spec: str,
    agents: str | None,
    rates: str | None,
    engine: str,
    seed: int | None,
    sets: tuple[str, ...],
    workers: int | None,
    scheduler: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Latency, throughput and utilization of SPEC at each load point."""
    parsed = parse_spec(spec)
    chosen = parse_engine(engine)
    scenario = load_scenario_of(parsed, sets, seed)
    closed = None if agents is None else parse_points("--agents", agents, int)
    open_ = None if rates is None else parse_points("--rates", rates, float)
    results: list[FleetResult] = []
    try:
        if chosen is Engine.ANALYTIC:
            results = load_curve(spec, scenario, parsed.transport, chosen, closed, open_)
        else:
            where = (workers, scheduler)
            _simulate(spec, scenario, parsed.transport, closed, open_, where, quiet, results)
    finally:
        # Points already computed are printed even when a later one fails or is interrupted.
        if results:
            print_points(spec, results, as_json, sets)


def print_points(
    spec: str, results: list[FleetResult], as_json: bool, sets: tuple[str, ...]
) -> None:
    """The load points as one JSON object or as a table with its notes; ``sets`` are the
    overrides applied to every point."""
    results = [replace(result, overrides=sets) for result in results]
    if as_json:
        payload = {
            "spec": spec,
            Metric.ENGINE.value: results[0].engine,
            "points": [result.to_json() for result in results],
        }
        click.echo(json_text(payload))
        return
    console = Console() if sys.stdout.isatty() else Console(width=TABLE_WIDTH)
    with console.capture() as drawn:
        console.print(load_table(spec, results))
    table = drawn.get()
    console.out(table, end="", highlight=False)
    # The notes wrap at the table's own width, not the terminal's.
    width = max(len(line.rstrip()) for line in table.splitlines())
    for note in table_notes(results):
        console.print(note, width=width)
    for note in unstable_notes(results):
        console.print(note, style="bold red", width=width)


def _simulate(
    spec: str,
    scenario: Scenario,
    transport: Transport,
    agents: list[int] | None,
    rates: list[float] | None,
    where: tuple[int | None, str | None],
    quiet: bool,
    results: list[FleetResult],
) -> None:
    """Every load point's replications, in parallel, with progress that moves with their
    simulated time; each finished point is appended to ``results`` at once.  The local
    workers are estimated first, each holding the largest point's replication."""
    replications = scenario.load.replications
    total = replications * len(agents if agents is not None else rates or [])
    points = load_scenarios(scenario, agents, rates)
    share = worker_share([fleet_need(spec, point, transport) for point in points])
    with replication_workers(*where, share) as pool, progress_bar(quiet) as bar:
        task = bar.add_task(f"{spec}: replications", total=total)
        with replication_progress(bar, task) as at_least:

            def started(point: Scenario) -> None:
                bar.update(task, description=f"{spec} at {load_point(point).label} ({pool.where})")

            def done(result: FleetResult) -> None:
                results.append(result)
                at_least(len(results) * replications)

            load_curve(
                spec, scenario, transport, Engine.DES, agents, rates, pool.executor, started, done
            )


def _with_ci(mean: float, interval: tuple[float, float] | None, scale: float, fmt: str) -> str:
    text = format(mean * scale, fmt)
    if interval is None:
        return text
    half = (interval[1] - interval[0]) / 2 * scale
    return f"{text}±{format(half, fmt)}"


def load_table(spec: str, results: list[FleetResult]) -> Table:
    """One row per load point: latency (with 95% intervals), throughput, pools; it fits
    ``TABLE_WIDTH`` columns."""
    first = results[0]
    closed = first.fleet.load.kind == "closed"
    table = Table(
        title=f"{spec} ({first.engine})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("agents" if closed else "rollouts\n/s", justify="right")
    pools = "/".join(POOL_ABBREVIATIONS[p] for p in POOLS)
    for column in (
        "e2e s\nmean±h",
        "e2e s\np95",
        "TTFT ms\nmean±h",
        "TTFT ms\np95/p99",
        "turns/s\n(95% CI)",
        "KV\nhit %",
        f"util %\n{pools}",
        "queue\ns",
    ):
        table.add_column(column, justify="right")
    for result in results:
        fleet = result.fleet
        load = f"{fleet.load.agents:,}" if closed else f"{fleet.load.rollouts_per_s:g}"
        if isinstance(result, UnmeasuredPoint):
            what = "UNSTABLE" if not result.stable else "NO ROLLOUT MEASURED"
            table.add_row(load, what, "-", "-", "-", "-", "-", "-", "-", style="red")
            continue
        stats = result.fleet
        e2e, ttft = result.e2e_s, result.ttft_s
        turns = stats.throughput[Metric.TURNS_PER_S]
        ci = "" if turns.ci95 is None else f" ({readable(turns.ci95[0])}-{readable(turns.ci95[1])})"
        tails = "-"
        if ttft.p95 is not None and ttft.p99 is not None:
            tails = f"{ttft.p95 * 1e3:.0f}/{ttft.p99 * 1e3:.0f}"
        table.add_row(
            load,
            _with_ci(e2e.mean, e2e.ci95, 1.0, ".1f"),
            "-" if e2e.p95 is None else f"{e2e.p95:.1f}",
            _with_ci(ttft.mean, ttft.ci95, 1e3, ".0f"),
            tails,
            f"{readable(turns.mean)}{ci}",
            f"{result.prefix_cache_hit_rate * 100:.0f}",
            "/".join(f"{stats.utilization[pool].mean * 100:.0f}" for pool in POOLS),
            f"{result.budget_s[Stage.QUEUE]:.2f}",
        )
    return table


def table_notes(results: list[FleetResult]) -> list[str]:
    """The legend, the interval method and, for the DES, where measuring began and whether
    it settled."""
    notes = [
        "mean±h: the mean and the half-width of its 95% interval; util %: time-average busy "
        "share of a = API workers, st = state store, sf = safety classifiers, in = inference "
        "slots; KV hit %: prompt tokens whose KV was reused; queue s: a rollout's waits for "
        "every pool",
        f"intervals: {results[0].fleet.ci_method}",
    ]
    cuts = [r.fleet.warmup_cut_s for r in results if r.fleet.warmup_cut_s is not None]
    if cuts:
        span = (
            f"{min(cuts):.0f}"
            if round(min(cuts)) == round(max(cuts))
            else (f"{min(cuts):.0f}-{max(cuts):.0f}")
        )
        notes.append(
            "measured from the warm-up cut (MSER-5 on the end-to-end series, at least "
            f"load.warmup_s): {span} s simulated"
        )
    for r in results:
        if isinstance(r, UnmeasuredPoint):
            continue
        limited = r.fleet.rate_limit
        if limited is not None:
            notes.append(
                f"rate limit at {r.fleet.load.label}: "
                f"{limited.admitted_requests_per_min.mean:,.0f} requests/min admitted per "
                f"organization, {limited.refused_per_request:.2f} 429s per request, "
                f"{limited.refused_s_per_turn:.3f} s refused per turn (in the retry stage)"
            )
        if not r.fleet.steady_state_reached:
            notes.append(
                f"warning: {r.fleet.load.label}: the run is too short to reach steady state "
                "(the end-to-end series never settles); lengthen load.duration_s"
            )
    return notes


def unstable_notes(results: list[FleetResult]) -> list[str]:
    """Why each unstable load point is unstable (printed instead of meaningless means)."""
    return [
        f"UNSTABLE at {r.fleet.load.label}: {r.fleet.unstable_reason}"
        for r in results
        if not r.stable
    ]
