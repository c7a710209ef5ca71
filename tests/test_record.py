"""``loopbudget record`` in front of ``testbed serve``: every request of the driver's HTTP,
http-full and WebSocket loops appears once in the trace, grouped into the driver's rollouts,
with the service's own timing fields, and the tool gaps it saw are the driver's steps between
its requests (its tool and building the next request); nothing secret is written down."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import CliResult, assert_one_line_error, scenario

from sim.record.service import content_path
from sim.testbed import clock
from sim.testbed.clock import TimerLead
from sim.testbed.driver import Agent
from sim.testbed.records import RolloutRecord
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time
from sim.traces.read import read_rollouts
from sim.traces.table import Request
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
LOOPBUDGET = Path(sys.executable).with_name("loopbudget")
TIME_SCALE = 0.1
ROLLOUTS = 3
TRANSPORTS = (Transport.HTTP, Transport.HTTP_FULL, Transport.WS)
GAP_TOLERANCE_S = 0.002
SPEC = scenario("codex-spark", "workload.tool_calls_per_rollout=6")


@dataclass(frozen=True)
class Recorded:
    driven: dict[Transport, list[RolloutRecord]]
    rollouts: list[list[Request]]
    printed: str
    trace: Path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    trace = tmp_path_factory.mktemp("record") / "trace.otel.json"
    scaled = scale_time(SPEC, TIME_SCALE)
    with emulator_process(scaled, ServerSettings()) as upstream:
        command = [str(LOOPBUDGET), "record", "--upstream", upstream, "--out", str(trace)]
        proxy = subprocess.Popen([*command, "--keep-content"], stdout=subprocess.PIPE, text=True)
        try:
            base_url = proxy.stdout.readline().split()[3].rstrip(";")

            async def drive() -> dict[Transport, list[RolloutRecord]]:
                lead = await TimerLead.measure()
                driven = {}
                for transport in TRANSPORTS:
                    agent = Agent(scaled, transport, base_url, DEFAULT_API_KEY, lead)
                    driven[transport] = [await agent.rollout(r) for r in range(ROLLOUTS)]
                return driven

            driven = clock.run(drive)
        finally:
            proxy.send_signal(signal.SIGINT)
            printed = proxy.stdout.read()
            proxy.wait(timeout=60)
    yield Recorded(driven, list(read_rollouts(trace)), printed, trace)


def _ids(rollout: RolloutRecord) -> list[str]:
    return [t.response_id for t in rollout.turns]


@pytest.mark.live
def test_each_request_appears_once_in_its_rollout(recorded: Recorded) -> None:
    traced = {tuple(r.response_id for r in rollout): rollout for rollout in recorded.rollouts}
    driven = [r for rollouts in recorded.driven.values() for r in rollouts]
    assert len(recorded.rollouts) == len(driven)
    for transport, rollouts in recorded.driven.items():
        for rollout in rollouts:
            requests = traced[tuple(_ids(rollout))]
            assert [r.request_index for r in requests] == list(range(len(rollout.turns)))
            assert {r.transport for r in requests} == {transport.value}
            assert all(r.error_type is None for r in requests)


@pytest.mark.live
def test_the_recorded_times_bracket_the_servers_and_sit_inside_the_clients(
    recorded: Recorded,
) -> None:
    """The proxy sees each request after the client sent it and its response before the
    client has read it; its time to first output is the client's, less two hops."""
    by_id = {r.response_id: r for rollout in recorded.rollouts for r in rollout}
    for rollouts in recorded.driven.values():
        for turn in (t for r in rollouts for t in r.turns):
            seen = by_id[turn.response_id]
            client_s = turn.completed_at_s - turn.started_at_s
            assert 0 < seen.duration_s < client_s
            assert 0 < seen.ttft_s < turn.ttft_s


@pytest.mark.live
def test_tool_gaps_are_the_drivers_tool_steps(recorded: Recorded) -> None:
    """A call's recorded span (its response's end to the request carrying its output) is the
    driver's step between the two requests: its tool and building the next request."""
    by_id = {r.response_id: r for rollout in recorded.rollouts for r in rollout}
    errors_s, beyond_tool_s = [], []
    for rollouts in recorded.driven.values():
        for rollout in rollouts:
            for turn, after in zip(rollout.turns, rollout.turns[1:], strict=False):
                [call] = by_id[turn.response_id].tool_calls
                gap_s = call.end_s - call.start_s
                errors_s.append(gap_s - (after.sent_at_s - turn.completed_at_s))
                beyond_tool_s.append(gap_s - turn.tool_s)
    # Each gap holds two scheduling delays of a shared machine (the proxy passing the end on,
    # the driver's request reaching it): the typical gap is held to the tolerance, and a
    # loaded machine's outliers are reported.
    absolute = sorted(abs(e) for e in errors_s)
    assert absolute[len(absolute) // 2] < GAP_TOLERANCE_S, sorted(errors_s)
    assert min(beyond_tool_s) > 0


@pytest.mark.live
def test_the_services_own_timing_and_usage_are_kept(recorded: Recorded) -> None:
    for rollout in recorded.rollouts:
        for request in rollout:
            assert request.input_tokens > request.cached_input_tokens > 0
            assert request.output_tokens > 0
            if request.transport == "ws":
                assert request.server_engine_ms > 0 and request.server_api_overhead_ms >= 0
                assert request.server_processing_ms is None
            else:
                assert request.server_processing_ms is not None
        connections = {r.connection_id for r in rollout}
        if rollout[0].transport == "ws":
            assert len(connections) == 1
            assert [r.connection_reused for r in rollout] == [False] + [True] * (len(rollout) - 1)


@pytest.mark.live
def test_the_proxy_reports_its_cost_and_writes_no_secret(recorded: Recorded) -> None:
    assert "the proxy added" in recorded.printed and "ms p99" in recorded.printed
    for path in (recorded.trace, content_path(recorded.trace)):
        text = path.read_text()
        assert DEFAULT_API_KEY not in text and "authorization" not in text.lower()
    kinds = [json.loads(line)["kind"] for line in content_path(recorded.trace).open()]
    requests = sum(len(r) for r in recorded.rollouts)
    assert kinds.count("request") == requests and kinds.count("response") == requests


@pytest.mark.parametrize(
    ("args", "mentions"),
    [
        (["--upstream", "ftp://example.com/v1", "--out", "t.json"], ["--upstream", "http"]),
        (["--upstream", "http://127.0.0.1:1/v1", "--out", "/no/such/dir/t.json"], ["--out"]),
        (["--upstream", "http://127.0.0.1:1/v1", "--out", "t.json", "--port", "70000"], ["--port"]),
    ],
    ids=["scheme", "out", "port"],
)
def test_bad_input_is_one_line(cli: Cli, args: list[str], mentions: list[str]) -> None:
    assert_one_line_error(cli("record", *args), *mentions)
