"""``loopbudget testbed``: the official SDK against the emulated API, measured beside simulated.

``loopbudget testbed SPEC`` runs the testbed and prints both sides;
``loopbudget testbed serve SPEC`` runs the emulator alone.  The testbed's
packages (the optional group ``testbed``) are imported inside the commands, so
the rest of the command line starts without them.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from models.errors import ScenarioError
from sim.analysis.run import load, parse_spec
from sim.cli.testbed_table import MachineLoad, cores, load_average, print_result
from sim.testbed.emulated import check_emulated
from sim.turn.transports import Transport

DEFAULT_ROLLOUTS = 4
_SINGLE = (Transport.HTTP, Transport.HTTP_FULL, Transport.WS)


class _DefaultRun(click.Group):
    """A group whose first argument, when it names no subcommand, is the SPEC of ``run``."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


@click.group(cls=_DefaultRun)
def testbed() -> None:
    """The official openai SDK drives agent loops against an emulated Responses API on
    loopback; what it measured is put beside the simulation of the same scenario.

    \b
    loopbudget testbed SPEC [--rollouts N] [--agents K] [--time-scale X] [--json]
    loopbudget testbed serve SPEC [--port P] [--time-scale X] [--rtt-ms R]
    """


def _time_scale(value: float) -> float:
    if not value > 0:
        raise ScenarioError(f"--time-scale = {value}: must be > 0")
    return value


def _scenario(spec_text: str, sets: tuple[str, ...], seed: int | None, agents: int | None) -> Any:
    spec = parse_spec(spec_text)
    extra = (f"load.agents={agents}",) if agents is not None else ()
    scenario = load(spec, (*sets, *extra), seed)
    check_emulated(scenario)
    return spec, scenario


@testbed.command("run")
@click.argument("spec")
@click.option("--rollouts", "-n", type=int, default=DEFAULT_ROLLOUTS, show_default=True)
@click.option("--agents", type=int, default=None, help="a fleet of K agents (default: the spec's)")
@click.option(
    "--time-scale",
    type=float,
    default=None,
    help="wall seconds per scenario second (default 0.1; 2 for a fleet)",
)
@click.option("--base-url", default=None, help="another Responses-compatible endpoint")
@click.option("--api-key", default=None, help="bearer token (default: the emulator's)")
@click.option(
    "--max-turns",
    type=int,
    default=None,
    help="requests a rollout may make before the driver stops it (default 256)",
)
@click.option(
    "--network",
    type=click.Choice(["scenario", "loopback"]),
    default="scenario",
    show_default=True,
    help="scenario: its round trip on a netem link where allowed, else an emulated one",
)
@click.option("--seed", type=int, default=None, help="root seed (default: the scenario's)")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def run(
    spec: str,
    rollouts: int,
    agents: int | None,
    time_scale: float | None,
    base_url: str | None,
    api_key: str | None,
    max_turns: int | None,
    network: str,
    seed: int | None,
    sets: tuple[str, ...],
    as_json: bool,
) -> None:
    """Measure SPEC on the testbed (every transport unless SPEC names one) beside its simulation."""
    from sim.testbed.driver import DEFAULT_TURN_LIMIT
    from sim.testbed.server import DEFAULT_API_KEY
    from sim.testbed.session import (
        DEFAULT_FLEET_TIME_SCALE,
        DEFAULT_TIME_SCALE,
        Request,
        run_testbed,
    )

    if rollouts < 1:
        raise ScenarioError(f"--rollouts = {rollouts}: must be an integer >= 1")
    if max_turns is not None and max_turns < 1:
        raise ScenarioError(f"--max-turns = {max_turns}: must be an integer >= 1")
    parsed, scenario = _scenario(spec, sets, seed, agents)
    if parsed.transport is Transport.WS_APPEND:
        raise ScenarioError("transport = 'ws-append': the SDK has no loop for it; use ws")
    fleet = scenario.load.agents > 1
    named = ":" in spec
    transports = (parsed.transport,) if named else ((Transport.WS,) if fleet else _SINGLE)
    request = Request(
        spec=spec,
        scenario=scenario,
        transports=transports,
        rollouts=rollouts,
        time_scale=_time_scale(
            time_scale
            if time_scale is not None
            else (DEFAULT_FLEET_TIME_SCALE if fleet else DEFAULT_TIME_SCALE)
        ),
        base_url=base_url,
        api_key=api_key or DEFAULT_API_KEY,
        turn_limit=max_turns or DEFAULT_TURN_LIMIT,
        network=network,
    )
    total = None if fleet else rollouts * len(transports)
    start_load = load_average()
    result = _with_progress(spec, total, lambda advance: run_testbed(request, advance))
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        print_result(Console(), result, MachineLoad(start_load, load_average(), cores()))


def _with_progress(label: str, total: int | None, work: Any) -> Any:
    if not sys.stderr.isatty():
        return work(None)
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{label}: rollouts", total=total)
        return work(lambda n: bar.advance(task, n))


@testbed.command()
@click.argument("spec")
@click.option("--port", type=int, default=0, show_default=True, help="0: a free port")
@click.option("--time-scale", type=float, default=1.0, show_default=True)
@click.option("--api-key", default=None, help="bearer token clients must send")
@click.option(
    "--rtt-ms",
    type=float,
    default=0.0,
    show_default=True,
    help="round trip added by an emulated link in front of the API (scenario ms)",
)
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
def serve(
    spec: str,
    port: int,
    time_scale: float,
    api_key: str | None,
    rtt_ms: float,
    sets: tuple[str, ...],
) -> None:
    """Run the emulated API alone, with SPEC's latencies, until interrupted."""
    from sim.testbed import clock
    from sim.testbed.server import DEFAULT_API_KEY, HOST, ServerSettings, serve
    from sim.testbed.timescale import scale_time

    _, scenario = _scenario(spec, sets, None, None)
    scaled = scale_time(scenario, _time_scale(time_scale))
    if not 0 <= rtt_ms <= 5000:
        raise ScenarioError(f"--rtt-ms = {rtt_ms:g}: must be between 0 and 5000")
    key = api_key or DEFAULT_API_KEY
    link_rtt_s = rtt_ms * 1e-3 * time_scale
    settings = ServerSettings(api_key=key, port=port, link_rtt_s=link_rtt_s)
    link = f", behind an emulated {rtt_ms:g} ms round trip" if rtt_ms else ""

    def ready(bound: int) -> None:
        click.echo(
            f"serving {spec} on http://{HOST}:{bound}/v1 (api key {key}){link}; Ctrl-C stops"
        )

    clock.run(lambda: serve(scaled, settings, ready))
