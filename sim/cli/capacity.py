"""``loopbudget capacity``: the largest fleet meeting latency SLOs, http against ws."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from models.errors import ScenarioError
from sim.analysis.run import load as load_scenario_of
from sim.analysis.run import parse_spec
from sim.capacity.objectives import CapacityResult, Evaluation, parse_slo
from sim.capacity.search import SearchProgress, search_all
from sim.cli.load import workers_options
from sim.cli.output import json_text
from sim.sweep.workers import replication_workers
from sim.turn.transports import Transport

TRANSPORTS = (Transport.HTTP, Transport.WS)


@click.command()
@click.argument("spec")
@click.option(
    "--slo",
    "slos",
    multiple=True,
    required=True,
    metavar="METRIC=SECONDS",
    help="e.g. ttft_p95_s=1.0; repeatable",
)
@click.option("--max-agents", type=int, default=100_000, show_default=True)
@click.option("--seed", type=int, default=None, help="root seed (default: the scenario's)")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
@workers_options
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def capacity(
    spec: str,
    slos: tuple[str, ...],
    max_agents: int,
    seed: int | None,
    sets: tuple[str, ...],
    workers: int | None,
    scheduler: str | None,
    as_json: bool,
) -> None:
    """Largest number of agents meeting every SLO, for http and for ws, and their ratio."""
    objectives = [parse_slo(text) for text in slos]
    if max_agents < 1:
        raise ScenarioError(f"--max-agents = {max_agents}: must be an integer >= 1")
    scenario = load_scenario_of(parse_spec(spec), sets, seed)
    probes: list[tuple[Transport, Evaluation]] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("replications"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("left"),
    )
    shown = not as_json and sys.stderr.isatty()
    with (
        replication_workers(workers, scheduler) as pool,
        Progress(*columns, console=Console(stderr=True), disable=not shown) as bar,
    ):
        tasks = {t: bar.add_task(f"{t.value}: analytic estimate", total=None) for t in TRANSPORTS}

        def report(progress: SearchProgress) -> None:
            if progress.finished is not None:
                probes.append((progress.transport, progress.finished))
            low, high = progress.bracket
            bracket = f"{low}-{'?' if high is None else high}"
            bar.update(
                tasks[progress.transport],
                description=(
                    f"{progress.transport.value}: probe {progress.probes} at "
                    f"{progress.agents} agents, bracket {bracket}"
                ),
                completed=progress.replications_done,
                total=progress.replications_planned,
            )

        try:
            found = search_all(
                scenario, TRANSPORTS, objectives, max_agents, pool.executor, pool.parallel, report
            )
        except (ScenarioError, KeyboardInterrupt):
            # The probes decided before the error are printed, not lost.
            print_probes(probes, as_json)
            raise
    http = found[Transport.HTTP].capacity_agents
    ratio = found[Transport.WS].capacity_agents / http if http else None
    if as_json:
        payload = {
            "spec": spec,
            "slos": list(slos),
            "engine": "des-fleet",
            "capacity": {t.value: entry.to_json() for t, entry in found.items()},
            "ws_over_http": ratio,
        }
        click.echo(json_text(payload))
        return
    out = Console()
    for entry in found.values():
        out.print(statement(entry))
    if ratio is not None:
        out.print(f"ws supports {ratio:.2f}x the agents of http at these SLOs", style="bold")


def statement(entry: CapacityResult) -> str:
    """The answer of one transport in one consistent statement: the point estimate, what
    holds with 95% confidence, the SLOs at the answer, and how it was found."""
    name = entry.transport.value
    n, failing = entry.capacity_agents, entry.first_failing_agents
    if n == 0:
        head = f"{name}: even 1 agent misses the SLOs (by the point estimate)"
    else:
        head = f"{name}: capacity {n:,} agents (point estimate: {n:,} meet every SLO"
        head += ")" if failing is None else f", {failing:,} do not)"
    low, high = entry.ci95_agents
    if high == 0:
        bounds = "0 (1 agent misses them with 95% confidence)"
    elif high is None:
        bounds = f"at least {low:,} agents"
    else:
        bounds = f"between {low:,} and {high:,} agents"
        if failing is not None and high >= failing:
            # The interval reaches past the load the point estimate fails: say why.
            bounds += f" ({failing:,} misses by its mean, but not at 95%)"
    text = f"{head}; with 95% confidence the capacity is {bounds}"
    at = entry.at_capacity
    if at is not None:
        checks = ", ".join(
            f"{metric} {check.value_s:.3f} s"
            + ("" if check.ci95 is None else f" (95% CI {check.ci95[0]:.3f}-{check.ci95[1]:.3f})")
            + f" against {check.limit_s:g} s"
            for metric, check in at.checks.items()
        )
        text += f". At {n:,} agents: {checks}"
    return (
        f"{text}. {_count(len(entry.evaluations), 'probe')}, "
        f"{_count(entry.replications, 'replication')}; "
        f"analytic estimate {entry.analytic_estimate_agents:,} agents "
        f"(saturation N* = {entry.saturation_agents:,.0f})."
    )


def print_probes(probes: list[tuple[Transport, Evaluation]], as_json: bool) -> None:
    """The probes a search decided before it stopped, one per line (or as JSON)."""
    if as_json:
        payload = [{"transport": t.value, **e.to_json()} for t, e in probes]
        click.echo(json_text({"finished_probes": payload}))
        return
    for transport, evaluation in probes:
        values = ", ".join(f"{m} {c.value_s:.3f} s" for m, c in evaluation.checks.items())
        verdict = "meets" if evaluation.meets else "misses"
        click.echo(f"{transport.value}: {evaluation.agents} agents {verdict} the SLOs ({values})")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
