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

from sim.cli.lazy_group import LazyGroup
from sim.cli.numbers import INT

USAGE_ERROR = 2


@click.group(
    cls=LazyGroup,
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
                type=INT,
                default=500,
                show_default=True,
                help="rollouts to simulate",
            ),
            click.option(
                "--seed", type=INT, default=None, help="root seed (default: the scenario's)"
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
    from rich.console import Console
    from rich.table import Table

    from models.hardware import hardware_registry
    from models.loading import preset_names, raw_scenario, validate
    from sim.turn.transports import Transport

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
    import tomli_w

    from models.errors import ScenarioError
    from models.loading import load_scenario, scenario_text
    from models.scenario_hash import scenario_hash

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
    from models.loading import raw_scenario
    from sim.analysis.spec import parse_engine, parse_spec

    # A bad spec, engine or source is refused in the order ``prepare`` checks them, before
    # the engines load: the one-line error comes at once.
    source = parse_spec(spec).source
    parse_engine(engine)
    raw_scenario(source)

    from rich.console import Console

    from sim.analysis.summary import summarize
    from sim.cli.output import json_text
    from sim.cli.report import print_run
    from sim.cli.running import execute_run as _execute
    from sim.cli.running import prepare as _prepare
    from sim.cli.running import write_files as _write_files
    from sim.cli.running import write_otel as _write_otel

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
    from rich.console import Console

    from sim.analysis.summary import compare as compare_runs
    from sim.cli.output import json_text
    from sim.cli.report import print_compare
    from sim.cli.running import execute_run as _execute
    from sim.cli.running import prepare as _prepare
    from sim.cli.running import write_files as _write_files
    from sim.cli.running import write_otel as _write_otel

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


MAX_LINE_CHARS = 1_000
"""Longest error line printed: longer ones keep their start and their end."""


def fitted(message: str) -> str:
    """``message`` on one line of at most ``MAX_LINE_CHARS`` characters (the quoted input is
    cut where messages quote it; this is the last guard)."""
    line = " ".join(message.split())
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[: MAX_LINE_CHARS - 205]} ... {line[-200:]}"


def main() -> None:
    """Entry point: run the app, turning bad input into one line and exit code 2."""
    from models.errors import ScenarioError

    try:
        app.main(standalone_mode=False)
    except ScenarioError as error:
        click.echo(f"error: {fitted(str(error))}", err=True)
        sys.exit(USAGE_ERROR)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else error.format_message())
    except click.UsageError as error:
        click.echo(f"error: {error.format_message()}", err=True)
        sys.exit(USAGE_ERROR)
    except click.exceptions.Abort:
        sys.exit(130)
