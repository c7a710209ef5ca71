"""The testbed's measured rollouts as OpenTelemetry spans, and the round trip through real
sockets: what the official SDK measured against the emulator, written as OTLP JSON, read
back and fitted with ``fit --holdout``, reproduces the held-out rollouts (e2e mean within
5%, p95 within 10%)."""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support import CliResult

from models.loading import load_scenario
from sim.report.otel import OtlpWriter
from sim.testbed import clock
from sim.testbed.clock import TimerLead
from sim.testbed.driver import Agent
from sim.testbed.records import RolloutRecord
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time
from sim.testbed.trace_out import epoch_offset_s, rollout_requests
from sim.traces.read import read_rollouts
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]

ROUND_TRIP = """
extends = "codex-spark"
name = "round-trip"
description = "ten calls of one tool a rollout, short prompts: little spread between rollouts"

[workload]
tool_calls_per_rollout = 10
instructions_tokens = 600.0
tool_definitions_tokens = 200.0

[[workload.tools]]
name = "run"
weight = 1.0
time_s = { kind = "lognormal", median = 0.3, sigma = 0.5 }
output_tokens = { kind = "lognormal", median = 300.0, sigma = 0.5 }
"""
"""The round trip's scenario.  Its e2e spreads little between rollouts (coefficient of
variation 0.12 over WebSocket mode), so 240 rollouts, 72 of them held out, put the
sampling error of the held-out mean near 1.7% and of its p95 near 2.5%.  Its prompts are
short, so the SDK's own CPU time a turn (building the request, parsing a response that
echoes the instructions and tools), which a loaded machine stretches at random and the
model has as a constant, is a small share of a turn; the time scale is 0.25, not the
testbed's 0.1, for the same reason: the machine's scheduling delays, a few milliseconds a
request and now and then a stall of a second or more, are a share of the scaled times
that shrinks as they grow."""
ROUND_TRIP_ROLLOUTS = 240
TIME_SCALE = 0.25


@pytest.mark.live
def test_the_otel_file_holds_the_measured_rollouts(cli: Cli, tmp_path: Path) -> None:
    """Each measured rollout is one trace: its requests, tool calls, usage and the server's
    own timing fields, with the e2e the run reported."""
    for transport in ("http", "ws"):
        otel = tmp_path / f"{transport}.otel.json"
        args = ("testbed", f"codex-spark:{transport}", "-n", "3", "--otel", str(otel))
        result = cli(*args, "--set", "workload.tool_calls_per_rollout=4", "--json")
        assert result.exit_code == 0, result.stderr
        measured = json.loads(result.stdout)["transports"][transport]["measured"]
        rollouts = list(read_rollouts(otel))
        assert len(rollouts) == 3
        e2e = [max(r.end_s for r in rollout) - rollout[0].start_s for rollout in rollouts]
        assert np.mean(e2e) == pytest.approx(measured["e2e_s"]["mean"], rel=1e-6)
        for rollout in rollouts:
            assert [r.request_index for r in rollout] == list(range(5))
            assert [len(r.tool_calls) for r in rollout] == [1, 1, 1, 1, 0]
            assert {r.transport for r in rollout} == {transport}
            assert [r.previous_response_id for r in rollout[1:]] == [
                r.response_id for r in rollout[:-1]
            ]
            for before, after in itertools.pairwise(rollout):
                [call] = before.tool_calls
                assert before.end_s <= call.start_s <= call.end_s <= after.start_s
            for request in rollout:
                assert request.start_s < request.first_output_s < request.end_s
                assert request.input_tokens > request.cached_input_tokens > 0
                if transport == "ws":
                    assert request.server_engine_ms > request.server_engine_ttft_ms > 0
                    assert request.server_api_overhead_ms >= 0
                else:
                    assert request.server_processing_ms is not None


@pytest.mark.live
@pytest.mark.slow
def test_the_round_trip_through_real_sockets(cli: Cli, tmp_path: Path) -> None:
    """Measured over WebSocket mode, written as OTel, fitted on 70% of the rollouts: the
    held-out 30% have the e2e mean and p95 the fitted scenario's simulation gives."""
    spec = tmp_path / "round-trip.toml"
    spec.write_text(ROUND_TRIP)
    scaled = scale_time(load_scenario(str(spec)), TIME_SCALE)
    otel = tmp_path / "measured.otel.json"
    with emulator_process(scaled, ServerSettings()) as base_url:

        async def drive() -> list[RolloutRecord]:
            agent = Agent(
                scaled, Transport.WS, base_url, DEFAULT_API_KEY, await TimerLead.measure()
            )
            # The SDK's first use of a path builds its types (seconds on a loaded machine),
            # and a full garbage collection over them pauses the loop for hundreds of
            # milliseconds: one rollout outside the measured ones first, then everything
            # it made is kept out of the collections (as a fleet run does).
            await agent.rollout(ROUND_TRIP_ROLLOUTS)
            gc.freeze()
            try:
                return [await agent.rollout(index) for index in range(ROUND_TRIP_ROLLOUTS)]
            finally:
                gc.unfreeze()

        rollouts = clock.run(drive)
    with OtlpWriter(otel, "testbed") as writer:
        for requests in rollout_requests(
            rollouts, "round-trip:ws", "ws", "127.0.0.1", epoch_offset_s()
        ):
            writer.write(requests)
    fitted = tmp_path / "fitted.toml"
    result = cli(
        "fit", str(otel), "--holdout", "0.3", "--seed", "5", "--out", str(fitted), "--json"
    )
    assert result.exit_code == 0, result.stderr
    held_out = json.loads(result.stdout)["held_out"]
    assert held_out["held_out_rollouts"] == round(0.3 * ROUND_TRIP_ROLLOUTS)
    e2e = held_out["e2e_s"]
    assert abs(e2e["mean"]["relative_error"]) < 0.05, e2e
    assert abs(e2e["p95"]["relative_error"]) < 0.10, e2e
