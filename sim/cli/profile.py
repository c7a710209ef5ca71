"""``loopbudget profile``: measure each stage of the real backend alone, write a profile TOML.

The measuring modules need the optional group ``engine`` (``make engine``); they
are imported inside the command, so the rest of the command line starts without.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from models.errors import ScenarioError
from sim.analysis.run import load, parse_spec
from sim.cli.numbers import INT

DEFAULT_SPEC = "docs/testbed-real.toml"


@click.command()
@click.argument("spec", default=DEFAULT_SPEC)
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="the profile TOML to write"
)
@click.option("--threads", type=INT, default=1, show_default=True, help="llama.cpp threads")
@click.option("--quick", is_flag=True, help="a smaller grid (about a minute)")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
def profile(spec: str, out: Path, threads: int, quick: bool, sets: tuple[str, ...]) -> None:
    """Profile the real engine (SmolLM2-135M on llama.cpp) on SPEC's text: prefill, decode,
    KV restore, validation and rendering, each alone; write the fitted fields and sources."""
    from sim.testbed.profiling.measure import QUICK, Plan
    from sim.testbed.profiling.measure import profile as measure

    if threads < 1:
        raise ScenarioError(f"--threads = {threads}: must be an integer >= 1")
    if not out.parent.is_dir():
        raise ScenarioError(f"--out = {str(out)!r}: its folder does not exist")
    scenario = load(parse_spec(spec), sets, None)
    plan = QUICK if quick else Plan()
    if sys.stderr.isatty():
        columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("profiling: measurements", total=plan.steps)
            result = measure(scenario, plan, threads, lambda n: bar.advance(task, n), spec)
    else:
        result = measure(scenario, plan, threads, None, spec)
    result.write(out)
    table = Table("field", "value", "source", title=f"profile written to {out}")
    for section, values in result.fields.items():
        for name, value in values.items():
            shown = (
                f"{value['value']:.4g} (constant)" if isinstance(value, dict) else f"{value:.4g}"
            )
            table.add_row(f"{section}.{name}", shown, result.sources.get(f"{section}.{name}", ""))
    for name, value in result.measured.items():
        table.add_row(name, f"{value:.4g}", "measured")
    Console().print(table)
