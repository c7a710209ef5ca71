"""``loopbudget load`` and ``loopbudget capacity``: the fleet under load."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from models.errors import ScenarioError
from models.loading import with_changes
from models.scenario import Scenario
from models.stages import POOLS
from sim.analysis.capacity import CapacityResult, Evaluation, parse_slo, search, with_agents
from sim.analysis.estimates import check_fleet, check_rollout_length
from sim.analysis.fleet_summary import fleet_result, run_fleet
from sim.analysis.load_points import parse_points
from sim.analysis.metrics import Metric
from sim.analysis.results import RunResult
from sim.analysis.run import load as load_scenario_of
from sim.analysis.run import parse_spec
from sim.cli.output import json_text
from sim.engine.transports import Transport


@click.command()
@click.argument("spec")
@click.option("--agents", help="closed load points, e.g. 1,10,100,1000")
@click.option("--rates", help="open load points in rollouts per second, e.g. 0.5,1,2")
@click.option("--seed", type=int, default=None, help="root seed (default: the scenario's)")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def load(
    spec: str,
    agents: str | None,
    rates: str | None,
    seed: int | None,
    sets: tuple[str, ...],
    as_json: bool,
) -> None:
    """Latency, throughput and utilization of SPEC at each load point."""
    parsed = parse_spec(spec)
    scenario = load_scenario_of(parsed, sets, seed)
    if (agents is None) == (rates is None):
        raise ScenarioError("load points: give exactly one of --agents or --rates")
    if agents is not None:
        points = [with_agents(scenario, n) for n in parse_points("--agents", agents, int)]
    else:
        points = [
            with_changes(scenario, ['load.kind="open"', f"load.rollouts_per_s={rate!r}"])
            for rate in parse_points("--rates", rates, float)
        ]
    for point in points:
        check_fleet(f"{spec} at {point_label(point)}", point, parsed.transport)
    results: list[RunResult] = []
    try:
        for point in points:
            replications = run_fleet(point, parsed.transport)
            results.append(fleet_result(spec, point, parsed.transport, replications))
    finally:
        # Points already simulated are printed even when a later one fails or is interrupted.
        if results:
            print_points(spec, results, as_json)


def point_label(scenario: Scenario) -> str:
    """A load point as the command line gave it."""
    load = scenario.load
    if load.kind == "closed":
        return f"{load.agents:,} agents"
    return f"{load.rollouts_per_s:g} rollouts/s"


def print_points(spec: str, results: list[RunResult], as_json: bool) -> None:
    """The load points as one JSON object or as a table with its notes."""
    if as_json:
        click.echo(json_text({"spec": spec, "points": [result.to_json() for result in results]}))
        return
    console = Console()
    console.print(load_table(spec, results))
    for note in unstable_notes(results):
        console.print(note, style="bold red")


def load_table(spec: str, results: list[RunResult]) -> Table:
    """One row per load point: latency, throughput, utilization per pool."""
    table = Table(title=f"{spec} ({results[0].fleet.ci_method})", title_justify="left")
    table.add_column("load")
    for column in ("e2e s mean/p95", "TTFT ms mean/p95/p99", "turns/s", "util " + "/".join(POOLS)):
        table.add_column(column, justify="right")
    for result in results:
        fleet = result.fleet
        if not result.stable:
            table.add_row(fleet.load.label, "UNSTABLE", "-", "-", "-", style="red")
            continue
        if result.e2e_s is None:
            table.add_row(fleet.load.label, "NO ROLLOUT MEASURED", "-", "-", "-", style="red")
            continue
        e2e, ttft = result.e2e_s, result.ttft_s
        table.add_row(
            fleet.load.label,
            f"{e2e.mean:.1f}/{e2e.p95:.1f}",
            f"{ttft.mean * 1e3:.0f}/{ttft.p95 * 1e3:.0f}/{ttft.p99 * 1e3:.0f}",
            f"{fleet.throughput[Metric.TURNS_PER_S].mean:.1f}",
            "/".join(f"{fleet.utilization[pool].mean:.0%}" for pool in POOLS),
        )
    return table


def unstable_notes(results: list[RunResult]) -> list[str]:
    """Why each unstable load point is unstable (printed instead of meaningless means)."""
    return [
        f"UNSTABLE at {r.fleet.load.rollouts_per_s:g} rollouts/s: {r.fleet.unstable_reason}"
        for r in results
        if not r.stable
    ]


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
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def capacity(
    spec: str,
    slos: tuple[str, ...],
    max_agents: int,
    seed: int | None,
    sets: tuple[str, ...],
    as_json: bool,
) -> None:
    """Largest number of agents meeting every SLO, for http and for ws, and their ratio."""
    objectives = [parse_slo(text) for text in slos]
    if max_agents < 1:
        raise ScenarioError(f"--max-agents = {max_agents}: must be an integer >= 1")
    scenario = load_scenario_of(parse_spec(spec), sets, seed)
    check_rollout_length(spec, scenario)
    console = Console(stderr=True)

    probes: list[tuple[str, Evaluation]] = []

    def report(evaluation: Evaluation) -> None:
        probes.append((transport.value, evaluation))
        if not as_json:
            verdict = "meets" if evaluation.meets else "misses"
            console.print(f"  {evaluation.agents} agents: {verdict} the SLOs")

    found: dict[str, CapacityResult] = {}
    try:
        for transport in (Transport.HTTP, Transport.WS):
            if not as_json:
                console.print(f"searching {transport.value} ...")
            found[transport.value] = search(
                scenario, transport, objectives, max_agents, on_evaluation=report
            )
    except (ScenarioError, KeyboardInterrupt):
        print_probes(probes, as_json)
        raise
    http_agents = found["http"].capacity_agents
    ratio = found["ws"].capacity_agents / http_agents if http_agents else None
    if as_json:
        payload = {
            "spec": spec,
            "slos": list(slos),
            "capacity": {name: entry.to_json() for name, entry in found.items()},
            "ws_over_http": ratio,
        }
        click.echo(json_text(payload))
        return
    out = Console()
    for name, entry in found.items():
        line = f"{name}: {entry.capacity_agents} agents meet the SLOs"
        if entry.first_failing_agents is not None:
            line += f" ({entry.first_failing_agents} do not)"
        at = entry.at_capacity
        for metric, check in (at.checks if at is not None else {}).items():
            sure = "yes" if check.met_with_95pct_confidence else "no"
            line += (
                f"; {metric} {check.value_s:.3f} s (95% CI {check.ci95[0]:.3f}-"
                f"{check.ci95[1]:.3f}, limit {check.limit_s:g}, met with 95% confidence: {sure})"
            )
        out.print(line)
    if ratio is not None:
        out.print(f"ws supports {ratio:.2f}x the agents of http at these SLOs", style="bold")


def print_probes(probes: list[tuple[str, Evaluation]], as_json: bool) -> None:
    """The probes a search finished before it stopped, one per line (or as JSON)."""
    if as_json:
        payload = [{"transport": name, **e.to_json()} for name, e in probes]
        click.echo(json_text({"finished_probes": payload}))
        return
    for name, evaluation in probes:
        values = ", ".join(f"{m} {c.value_s:.3f} s" for m, c in evaluation.checks.items())
        verdict = "meets" if evaluation.meets else "misses"
        click.echo(f"{name}: {evaluation.agents} agents {verdict} the SLOs ({values})")
