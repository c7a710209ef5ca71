"""``loopbudget record``: a recording proxy in front of a Responses API endpoint.

The proxy's packages (the optional group ``testbed``) are imported inside the
command, so the rest of the command line starts without them.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import click

from models.errors import ScenarioError
from sim.cli.output import check_writable


def _upstream(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ScenarioError(f"--upstream = {url!r}: must be an http:// or https:// base URL")
    return url


@click.command()
@click.option(
    "--upstream",
    required=True,
    help="the API's base URL, e.g. https://api.openai.com/v1",
)
@click.option("--port", type=int, default=0, show_default=True, help="0: a free port")
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
    from sim.record.service import record as serve_recorder
    from sim.testbed import clock

    _upstream(upstream)
    if not 0 <= port <= 65535:
        raise ScenarioError(f"--port = {port}: must be 0 (a free port) or 1-65535")
    check_writable(out, "--out")

    def ready(base_url: str) -> None:
        click.echo(f"recording {upstream} on {base_url}; Ctrl-C stops and writes {out}")

    recording = clock.run(lambda: serve_recorder(upstream, out, port, keep_content, ready))
    click.echo(recording.line())
