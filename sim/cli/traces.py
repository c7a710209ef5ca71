"""``loopbudget trace summarize`` and the reading every trace command shares (with progress)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TimeRemainingColumn,
)
from rich.table import Table

from models.errors import ScenarioError
from sim.cli.output import json_text
from sim.traces.read import read_rollouts
from sim.traces.report import ReadReport
from sim.traces.summary import rows, summarize
from sim.traces.table import Request


def read_traces(paths: Sequence[Path]) -> tuple[list[Request], list[ReadReport]]:
    """Every request of the files, with a bar on a terminal; problems are printed to stderr."""
    if not paths:
        raise ScenarioError("TRACE: give at least one trace file")
    requests: list[Request] = []
    reports = []
    show = sys.stderr.isatty()
    columns = ("{task.description}", BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True, disable=not show) as bar:
        for path in paths:
            task = bar.add_task(f"reading {path.name}", total=max(path.stat().st_size, 1))

            def advance(done: int, total: int, task: TaskID = task) -> None:
                bar.update(task, completed=done, total=max(total, 1))

            report = ReadReport(str(path))
            for rollout in read_rollouts(path, report, advance):
                requests.extend(rollout)
            reports.append(report)
    for report in reports:
        for line in report.lines_of_text():
            click.echo(f"warning: {line}", err=True)
    return requests, reports


@click.group()
def trace() -> None:
    """Read agent traces (Codex rollout JSONL, OTLP JSON, Agents SDK spans)."""


@trace.command("summarize")
@click.argument("traces", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def summarize_command(traces: tuple[Path, ...], as_json: bool) -> None:
    """Requests, tool calls, tool times, tokens, TTFT and decode rate of TRACE files."""
    requests, reports = read_traces(traces)
    summary = summarize(requests, reports)
    if as_json:
        click.echo(json_text(summary))
        return
    formats = ", ".join(sorted({r.format for r in reports}))
    table = Table(
        title=f"{summary['rollouts']:,} rollouts, {summary['requests']:,} requests ({formats})"
    )
    for column in ("quantity", "n", "mean", "p50", "p95"):
        table.add_column(column, justify="left" if column == "quantity" else "right")
    for row in rows(summary):
        table.add_row(*row)
    Console().print(table)
