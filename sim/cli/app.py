"""The ``loopbudget`` command line: presets, show, run, compare.

Bad input prints one line naming the field, the value and what is allowed,
and exits with code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import numpy as np
import tomli_w
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from models.errors import ScenarioError
from models.hardware import hardware_registry
from models.loading import load_scenario, preset_names, raw_scenario, scenario_text, validate
from models.scenario import Scenario
from models.scenario_hash import scenario_hash
from sim.analysis.estimates import check_run
from sim.analysis.run import Engine, Run, Spec, execute, load, parse_engine, parse_spec
from sim.analysis.summary import compare as compare_runs
from sim.analysis.summary import summarize
from sim.cli.capacity import capacity as capacity_command
from sim.cli.fit import fit as fit_command
from sim.cli.load import load as load_command
from sim.cli.output import check_writable, json_text, write_output
from sim.cli.record import record as record_command
from sim.cli.report import print_compare, print_run
from sim.cli.sweep import plot as plot_command
from sim.cli.sweep import sweep as sweep_command
from sim.cli.testbed import testbed as testbed_command
from sim.cli.traces import trace as trace_command
from sim.report.chrome_trace import write_trace
from sim.report.export import output_paths, record_tables, write_records
from sim.report.otel import write_otlp
from sim.report.simulated_trace import run_requests
from sim.turn.transports import Transport

USAGE_ERROR = 2
MIN_ROLLOUTS = 2
"""Fewest rollouts of a simulation: a confidence interval needs two."""


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Where does the time go in an AI agent's loop? Latency budgets of HTTP vs WebSocket.",
)
def app() -> None:
    pass


Decorated = TypeVar("Decorated", bound=Callable[..., Any])


def run_options(command: Decorated) -> Decorated:
    """Options shared by run and compare."""
    for option in reversed(
        [
            click.option(
                "--rollouts",
                "-n",
                type=int,
                default=500,
                show_default=True,
                help="rollouts to simulate",
            ),
            click.option(
                "--seed", type=int, default=None, help="root seed (default: the scenario's)"
            ),
            click.option(
                "--set",
                "sets",
                multiple=True,
                metavar="PATH=VALUE",
                help="override a field, e.g. network.rtt_ms=40 (TOML value); repeatable",
            ),
            click.option(
                "--engine",
                default="des",
                show_default=True,
                help="des (simulation) or analytic (closed form)",
            ),
            click.option("--json", "as_json", is_flag=True, help="print one JSON object"),
            click.option(
                "--trace",
                type=click.Path(dir_okay=False, path_type=Path),
                help="write the simulated turns as Chrome trace events (Perfetto)",
            ),
            click.option(
                "--out",
                type=click.Path(dir_okay=False, path_type=Path),
                help="write the records, one row per rollout and per turn: FILE.parquet, "
                ".csv (turns in FILE.turns.*) or .json",
            ),
            click.option(
                "--otel",
                type=click.Path(dir_okay=False, path_type=Path),
                help="write the simulated rollouts as OTLP JSON GenAI spans (docs/traces.md)",
            ),
        ]
    ):
        command = option(command)
    return command


@app.command()
def presets() -> None:
    """List the presets, the hardware profiles and the transports."""
    console = Console()
    table = Table("preset", "description", title="presets", title_justify="left")
    for name in preset_names():
        table.add_row(name, validate(raw_scenario(name)).description)
    console.print(table)
    hardware = Table("hardware", "description", title="hardware profiles", title_justify="left")
    for name, entry in hardware_registry().items():
        hardware.add_row(name, entry.description)
    console.print(hardware)
    transports = Table("transport", "description", title="transports", title_justify="left")
    for transport in Transport:
        transports.add_row(transport.value, transport.description)
    console.print(transports)


@app.command()
@click.argument("name")
@click.option("--resolved", is_flag=True, help="print every field, the hardware profile filled in")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="PATH=VALUE",
    help="with --resolved: apply an override first, as run does; repeatable",
)
def show(name: str, resolved: bool, sets: tuple[str, ...]) -> None:
    """Print preset or TOML file NAME as written (or resolved and validated), ready to edit."""
    if resolved:
        scenario = load_scenario(name, sets)
        click.echo(f"# scenario hash: {scenario_hash(scenario)} (seed aside)")
        click.echo(tomli_w.dumps(scenario.model_dump(mode="json", by_alias=True)))
    elif sets:
        raise ScenarioError("--set: needs --resolved (the file is shown as written)")
    else:
        click.echo(scenario_text(name), nl=False)


@app.command()
@click.argument("spec")
@run_options
def run(
    spec: str,
    rollouts: int,
    seed: int | None,
    sets: tuple[str, ...],
    engine: str,
    as_json: bool,
    trace: Path | None,
    out: Path | None,
    otel: Path | None,
) -> None:
    """Simulate SPEC (PRESET_OR_FILE.toml[:TRANSPORT], e.g. codex-spark:ws); print its budget."""
    prepared = _prepare(spec, rollouts, seed, sets, engine, trace, out, otel)
    outcome = _execute(prepared, rollouts, sets)
    result = summarize(outcome)
    if as_json:
        click.echo(json_text(result.to_json()))
    else:
        print_run(Console(), result)
    _write_files(trace, out, {spec: outcome})
    _write_otel(otel, {spec: outcome})


@app.command()
@click.argument("spec_a")
@click.argument("spec_b")
@run_options
def compare(
    spec_a: str,
    spec_b: str,
    rollouts: int,
    seed: int | None,
    sets: tuple[str, ...],
    engine: str,
    as_json: bool,
    trace: Path | None,
    out: Path | None,
    otel: Path | None,
) -> None:
    """Compare SPEC_A (baseline) with SPEC_B on the same workload draws."""
    both = [
        _prepare(text, rollouts, seed, sets, engine, trace, out, otel, runs=2)
        for text in (spec_a, spec_b)
    ]
    a, b = (_execute(prepared, rollouts, sets) for prepared in both)
    result = compare_runs(a, b)
    if as_json:
        click.echo(json_text(result.to_json()))
    else:
        print_compare(Console(), result)
    _write_files(trace, out, {"a": a, "b": b})
    _write_otel(otel, {"a": a, "b": b})


app.add_command(load_command)
app.add_command(capacity_command)
app.add_command(sweep_command)
app.add_command(plot_command)
app.add_command(testbed_command)
app.add_command(record_command)
app.add_command(trace_command)
app.add_command(fit_command)


def _prepare(
    spec_text: str,
    rollouts: int,
    seed: int | None,
    sets: tuple[str, ...],
    engine_name: str,
    trace: Path | None,
    out: Path | None,
    otel: Path | None = None,
    runs: int = 1,
) -> tuple[Spec, Scenario, Engine, bool]:
    """Everything a run needs, checked before any run starts: spec, scenario, engine,
    rollouts, the trace and records files and the estimate against the caps."""
    spec = parse_spec(spec_text)
    engine = parse_engine(engine_name)
    scenario = load(spec, sets, seed)
    for option, path in (("--trace", trace), ("--out", out), ("--otel", otel)):
        if path is not None and engine is Engine.ANALYTIC:
            raise ScenarioError(
                f"{option}: needs --engine des (the analytic engine draws no turns)"
            )
    if rollouts < 1:
        raise ScenarioError(f"--rollouts = {rollouts}: must be an integer >= 1")
    if engine is Engine.DES and not scenario.on_fleet and rollouts < MIN_ROLLOUTS:
        raise ScenarioError(
            f"--rollouts = {rollouts}: the simulation needs at least {MIN_ROLLOUTS} rollouts "
            "for a 95% CI; use --engine analytic for expected values alone"
        )
    if trace is not None:
        check_writable(trace, "--trace")
    if otel is not None:
        check_writable(otel, "--otel")
    if out is not None:
        for path in output_paths(out).values():
            check_writable(path, "--out")
    keep_turns = trace is not None or out is not None or otel is not None
    analytic = engine is Engine.ANALYTIC
    check_run(spec.text, scenario, spec.transport, analytic, rollouts, keep_turns, runs)
    return spec, scenario, engine, keep_turns


def _execute(
    prepared: tuple[Spec, Scenario, Engine, bool], rollouts: int, sets: tuple[str, ...]
) -> Run:
    spec, scenario, engine, keep_turns = prepared
    if not sys.stderr.isatty() or engine is Engine.ANALYTIC:
        return execute(spec, scenario, engine, rollouts, keep_turns, overrides=sets)
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(spec.text, total=rollouts)

        def advance(done: int) -> None:
            bar.advance(task, done)

        return execute(spec, scenario, engine, rollouts, keep_turns, advance, sets)


def _write_files(trace: Path | None, out: Path | None, runs: dict[str, Run]) -> None:
    """Write the trace and the records asked for (runs by label: the spec, or a and b of a
    comparison); say on standard error what was written.  A failure is one line, after
    the summary has been printed."""
    if trace is not None:
        labelled = {
            label if label == r.spec.text else f"{label}: {r.spec.text}": r.turn_records()
            for label, r in runs.items()
        }
        write_output(trace, "--trace", lambda target: write_trace(target, labelled))
        rollouts = sum(len(np.unique(turns.rollout)) for turns in labelled.values())
        click.echo(f"wrote {trace}: the turns of {rollouts} rollouts (ui.perfetto.dev)", err=True)
    if out is not None:
        tables = record_tables(runs)
        written: list[Path] = []
        write_output(out, "--out", lambda target: written.extend(write_records(target, tables)))
        click.echo(
            f"wrote {', '.join(map(str, written))}: {tables.rollouts.num_rows:,} rollouts, "
            f"{tables.turns.num_rows:,} turns",
            err=True,
        )


def _write_otel(otel: Path | None, runs: dict[str, Run]) -> None:
    """Write the runs' rollouts as OTLP JSON, each rollout id ``{label}/{rollout}``."""
    if otel is None:
        return

    def write(target: Path) -> None:
        rollouts = (rollout for label, run in runs.items() for rollout in run_requests(run, label))
        count = write_otlp(target, rollouts, agent_name=next(iter(runs.values())).scenario.name)
        click.echo(f"wrote {otel}: {count} rollouts as OTLP JSON (docs/traces.md)", err=True)

    write_output(otel, "--otel", write)


def main() -> None:
    """Entry point: run the app, turning bad input into one line and exit code 2."""
    try:
        app.main(standalone_mode=False)
    except ScenarioError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(USAGE_ERROR)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else error.format_message())
    except click.UsageError as error:
        click.echo(f"error: {error.format_message()}", err=True)
        sys.exit(USAGE_ERROR)
    except click.exceptions.Abort:
        sys.exit(130)
