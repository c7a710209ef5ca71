"""``loopbudget record``: a recording proxy in front of a Responses API endpoint.

The proxy's packages (the optional group ``testbed``) are imported inside the
command, so the rest of the command line starts without them.
"""

from __future__ import annotations

from pathlib import Path

import click

from sim.cli.endpoints import check_base_url, check_port
from sim.cli.numbers import INT
from sim.cli.output import check_writable


@click.command()
@click.option(
    "--upstream",
    required=True,
    help="the API's base URL, e.g. https://api.openai.com/v1",
)
@click.option("--port", type=INT, default=0, show_default=True, help="0: a free port")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="the trace to write (OTLP JSON, one rollout a line)",
)
@click.option(
    "--keep-content",
    is_flag=True,
    help="also write the request and response bodies (OUT.content.jsonl); never headers",
)
def record(upstream: str, port: int, out: Path, keep_content: bool) -> None:
    """Record every Responses API request of an agent pointed at this proxy.

    \b
    loopbudget record --upstream https://api.openai.com/v1 --out trace.otel.json
    then point the agent's base URL at the printed one (its key is passed through,
    never written down); Ctrl-C stops, writes the trace and prints the proxy's cost.
    """
    from sim.record.service import run

    check_base_url(upstream, "--upstream")
    check_port(port)
    check_writable(out, "--out")

    def ready(base_url: str) -> None:
        click.echo(f"recording {upstream} on {base_url}; Ctrl-C stops and writes {out}")

    recording = run(upstream, out, port, keep_content, ready)
    click.echo(recording.line())
