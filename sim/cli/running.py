"""What ``run`` and ``compare`` do around the engines: check a run before it starts, run it
with a bar on a terminal, and write the files asked for."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import numpy as np
from click.core import ParameterSource

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.analysis.estimates import check_run
from sim.analysis.run import Engine, Run, Spec, execute, load, parse_engine, parse_spec
from sim.cli.output import check_distinct, check_writable, write_output

MIN_ROLLOUTS = 2
"""Fewest rollouts of a simulation: a confidence interval needs two."""


def prepare(
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
    if scenario.on_fleet and _given("rollouts"):
        raise ScenarioError(
            f"--rollouts = {rollouts}: {spec_text} runs on the fleet engine, whose rollouts "
            "are those its agents start in the window (load.agents, load.duration_s); leave "
            "--rollouts out"
        )
    if engine is Engine.DES and not scenario.on_fleet and rollouts < MIN_ROLLOUTS:
        raise ScenarioError(
            f"--rollouts = {rollouts}: the simulation needs at least {MIN_ROLLOUTS} rollouts "
            "for a 95% CI; use --engine analytic for expected values alone"
        )
    outputs = [("--trace", trace), ("--otel", otel)]
    if out is not None:
        # Writers (pyarrow) and exporters (OpenTelemetry) load only when a file is asked for.
        from sim.report.export import output_paths

        outputs += [("--out", path) for path in dict.fromkeys(output_paths(out).values())]
    for option, path in outputs:
        if path is not None:
            check_writable(path, option)
    check_distinct([(option, path) for option, path in outputs if path is not None])
    keep_turns = trace is not None or out is not None or otel is not None
    analytic = engine is Engine.ANALYTIC
    check_run(spec.text, scenario, spec.transport, analytic, rollouts, keep_turns, runs)
    return spec, scenario, engine, keep_turns


def _given(parameter: str) -> bool:
    """Whether the command line gave ``parameter`` (not its default)."""
    context = click.get_current_context(silent=True)
    return context is not None and (
        context.get_parameter_source(parameter) is ParameterSource.COMMANDLINE
    )


def execute_run(
    prepared: tuple[Spec, Scenario, Engine, bool], rollouts: int, sets: tuple[str, ...]
) -> Run:
    spec, scenario, engine, keep_turns = prepared
    if not sys.stderr.isatty() or engine is Engine.ANALYTIC:
        return execute(spec, scenario, engine, rollouts, keep_turns, overrides=sets)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(spec.text, total=rollouts)

        def advance(done: int) -> None:
            bar.advance(task, done)

        return execute(spec, scenario, engine, rollouts, keep_turns, advance, sets)


def write_files(trace: Path | None, out: Path | None, runs: dict[str, Run]) -> None:
    """Write the trace and the records asked for (runs by label: the spec, or a and b of a
    comparison); say on standard error what was written.  A failure is one line, after
    the summary has been printed."""
    if trace is not None:
        from sim.report.chrome_trace import write_trace

        labelled = {
            label if label == r.spec.text else f"{label}: {r.spec.text}": r.turn_records()
            for label, r in runs.items()
        }
        write_output(trace, "--trace", lambda target: write_trace(target, labelled))
        rollouts = sum(len(np.unique(turns.rollout)) for turns in labelled.values())
        click.echo(f"wrote {trace}: the turns of {rollouts} rollouts (ui.perfetto.dev)", err=True)
    if out is not None:
        from sim.report.export import record_tables, write_records

        tables = record_tables(runs)
        written: list[Path] = []
        write_output(out, "--out", lambda target: written.extend(write_records(target, tables)))
        click.echo(
            f"wrote {', '.join(map(str, written))}: {tables.rollouts.num_rows:,} rollouts, "
            f"{tables.turns.num_rows:,} turns",
            err=True,
        )


def write_otel(otel: Path | None, runs: dict[str, Run]) -> None:
    """Write the runs' rollouts as OTLP JSON, each rollout id ``{label}/{rollout}``."""
    if otel is None:
        return
    from sim.report.otel import write_otlp
    from sim.report.simulated_trace import run_requests

    def write(target: Path) -> None:
        rollouts = (rollout for label, run in runs.items() for rollout in run_requests(run, label))
        count = write_otlp(target, rollouts, agent_name=next(iter(runs.values())).scenario.name)
        click.echo(f"wrote {otel}: {count} rollouts as OTLP JSON (docs/traces.md)", err=True)

    write_output(otel, "--otel", write)
