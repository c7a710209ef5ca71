"""``loopbudget testbed``: the official SDK against the emulated API, measured beside simulated.

``loopbudget testbed SPEC`` runs the testbed and prints both sides;
``loopbudget testbed serve SPEC`` runs the emulator alone.  The testbed's
packages (the optional group ``testbed``) are imported inside the commands, so
the rest of the command line starts without them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from models.errors import ScenarioError
from sim.analysis.run import load, parse_spec
from sim.cli.endpoints import check_answers, check_api_key, check_base_url, check_port
from sim.cli.numbers import FLOAT, INT
from sim.cli.output import check_writable
from sim.cli.progress import quiet_option
from sim.cli.testbed_table import MachineLoad, cores, load_average, print_result
from sim.report.progress import progress_bar
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
@click.option("--rollouts", "-n", type=INT, default=DEFAULT_ROLLOUTS, show_default=True)
@click.option("--agents", type=INT, default=None, help="a fleet of K agents (default: the spec's)")
@click.option(
    "--time-scale",
    type=FLOAT,
    default=None,
    help="wall seconds per scenario second (default 0.1; 2 for a fleet)",
)
@click.option("--base-url", default=None, help="another Responses-compatible endpoint")
@click.option("--api-key", default=None, help="bearer token (default: the emulator's)")
@click.option(
    "--max-turns",
    type=INT,
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
@click.option("--seed", type=INT, default=None, help="root seed (default: the scenario's)")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="override a field")
@click.option(
    "--otel",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the measured rollouts as OTLP JSON GenAI spans (docs/traces.md)",
)
@quiet_option
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option(
    "--engine",
    type=click.Choice(["emulated", "real"]),
    default="emulated",
    show_default=True,
    help="real: SmolLM2 on llama.cpp behind the emulator (needs --profile)",
)
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(path_type=Path),
    default=None,
    help="a profile TOML (loopbudget profile) the real engine's run is predicted from",
)
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
    otel: Path | None,
    quiet: bool,
    as_json: bool,
    engine: str,
    profile_path: Path | None,
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
    if base_url is not None:
        check_base_url(base_url, "--base-url")
    if max_turns is not None and max_turns < 1:
        raise ScenarioError(f"--max-turns = {max_turns}: must be an integer >= 1")
    if otel is not None:
        check_writable(otel, "--otel")
    parsed, scenario = _scenario(spec, sets, seed, agents)
    if engine == "real":
        scenario = _profiled(scenario, profile_path)
        time_scale = 1.0 if time_scale is None else time_scale
    elif profile_path is not None:
        raise ScenarioError("--profile: only the real engine's run is predicted from a profile")
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
        api_key=check_api_key(api_key) or DEFAULT_API_KEY,
        engine=engine,
        turn_limit=max_turns or DEFAULT_TURN_LIMIT,
        network=network,
        otel=otel,
    )
    if base_url is not None:
        check_answers(base_url, "--base-url")
    total = None if fleet else rollouts * len(transports)
    start_load = load_average()
    result = _with_progress(spec, total, lambda advance: run_testbed(request, advance), quiet)
    if otel is not None:
        click.echo(f"wrote {otel}: the measured rollouts as OTLP JSON (docs/traces.md)", err=True)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        print_result(Console(), result, MachineLoad(start_load, load_average(), cores()))


def _profiled(scenario: Any, path: Path | None) -> Any:
    """``scenario`` with a profile's fields (the real engine's run is predicted from them)."""
    from sim.testbed.profiling.profile_file import read_profile

    if path is None:
        raise ScenarioError(
            "--engine real: needs --profile FILE (loopbudget profile SPEC --out FILE writes one)"
        )
    return read_profile(path).apply(scenario)


def _with_progress(label: str, total: int | None, work: Any, quiet: bool) -> Any:
    with progress_bar(quiet) as bar:
        task = bar.add_task(f"{label}: rollouts", total=total)
        return work(lambda n: bar.advance(task, n))


@testbed.command()
@click.argument("spec")
@click.option("--port", type=INT, default=0, show_default=True, help="0: a free port")
@click.option("--time-scale", type=FLOAT, default=1.0, show_default=True)
@click.option("--api-key", default=None, help="bearer token clients must send")
@click.option(
    "--rtt-ms",
    type=FLOAT,
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

    check_port(port)
    _, scenario = _scenario(spec, sets, None, None)
    scaled = scale_time(scenario, _time_scale(time_scale))
    if not 0 <= rtt_ms <= 5000:
        raise ScenarioError(f"--rtt-ms = {rtt_ms:g}: must be between 0 and 5000")
    key = check_api_key(api_key) or DEFAULT_API_KEY
    link_rtt_s = rtt_ms * 1e-3 * time_scale
    settings = ServerSettings(api_key=key, port=port, link_rtt_s=link_rtt_s)
    link = f", behind an emulated {rtt_ms:g} ms round trip" if rtt_ms else ""

    def ready(bound: int) -> None:
        click.echo(
            f"serving {spec} on http://{HOST}:{bound}/v1 (api key {key}){link}; Ctrl-C stops"
        )

    clock.run(lambda: serve(scaled, settings, ready))
