"""Record, then fit (docs/record.md): the driver and the plain SDK loop of the docs, through
``loopbudget record`` in front of ``loopbudget testbed serve`` with a known scenario.  The
fitted API-overhead and inference fields come from what the service said about its own
time (the WebSocket timing event; ``openai-processing-ms`` of whole responses), and they
give back the scenario the emulator served."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from openai import OpenAI
from support import CliResult, scenario

from models.loading import load_scenario
from models.scenario import Scenario
from sim.testbed import clock
from sim.testbed.clock import TimerLead
from sim.testbed.driver import Agent
from sim.testbed.server import DEFAULT_API_KEY
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
LOOPBUDGET = Path(sys.executable).with_name("loopbudget")
SETS = ("workload.tool_calls_per_rollout=4", 'workload.output_tokens={kind="constant",value=20}')
"""Four calls a rollout, and short answers: what ``openai-processing-ms`` tells the fit is
the service's whole time, and the API's share of it is what is left after the inference
the fit assumes (the decode rate a trace of whole responses cannot tell), so the check keeps
the decode a small part of it."""
SPEC = scenario("codex-spark", *SETS)
DRIVER_ROLLOUTS = 6
PLAIN_ROLLOUTS = 6
API_TIMING = "responses_duration_excl_engine_and_client_tool_time_ms"
ENGINE_TIMING = "engine_service_ttft_total_ms"


@contextmanager
def _printing(command: list[str]) -> Iterator[str]:
    """A command that prints the base URL it serves on its first line, after "on";
    interrupted on exit."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        words = process.stdout.readline().split()
        yield words[words.index("on") + 1].rstrip(";")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


def _recorded(upstream: str, out: Path) -> AbstractContextManager[str]:
    return _printing([str(LOOPBUDGET), "record", "--upstream", upstream, "--out", str(out)])


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The driver over WebSocket mode and the plain SDK loop over HTTP, each through its
    own recording proxy in front of one emulator at time scale 1."""
    folder = tmp_path_factory.mktemp("record-fit")
    serve = [str(LOOPBUDGET), "testbed", "serve", "codex-spark"]
    serve += [arg for value in SETS for arg in ("--set", value)]
    out = {"driver": folder / "driver.otel.json", "plain": folder / "plain.otel.json"}
    with _printing(serve) as upstream:
        with _recorded(upstream, out["driver"]) as base_url:

            async def drive() -> None:
                lead = await TimerLead.measure()
                agent = Agent(SPEC, Transport.WS, base_url, DEFAULT_API_KEY, lead)
                for index in range(DRIVER_ROLLOUTS):
                    await agent.rollout(index)

            clock.run(drive)
        with _recorded(upstream, out["plain"]) as base_url:
            for task in range(PLAIN_ROLLOUTS):
                plain_sdk_loop(base_url, f"fix bug {task}")
    return out


def plain_sdk_loop(base_url: str, task: str) -> None:
    """The loop docs/record.md shows: the SDK's plain calls, whole JSON responses."""
    client = OpenAI(base_url=base_url, api_key="loopbudget-testbed")
    tools = [{"type": "function", "name": "run", "parameters": {"type": "object"}}]
    response = client.responses.create(model="any", input=task, tools=tools)
    while calls := [item for item in response.output if item.type == "function_call"]:
        outputs = [
            {"type": "function_call_output", "call_id": c.call_id, "output": "ok"} for c in calls
        ]
        response = client.responses.create(
            model="any", input=outputs, previous_response_id=response.id, tools=tools
        )
    client.close()


def _fit(cli: Cli, trace: Path, tmp_path: Path) -> tuple[dict[str, str], Scenario]:
    out = tmp_path / f"{trace.stem}.toml"
    result = cli("fit", str(trace), "--out", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    return payload["sources"], load_scenario(str(out))


@pytest.mark.live
@pytest.mark.slow
def test_the_drivers_websocket_timing_sets_the_api_and_inference_fields(
    cli: Cli, traces: dict[str, Path], tmp_path: Path
) -> None:
    sources, fitted = _fit(cli, traces["driver"], tmp_path)
    for field in (
        "api.validate_fixed_ms",
        "api.render_per_1k_tokens_ms",
        "safety.blocking_fixed_ms",
    ):
        assert API_TIMING in sources[field], sources[field]
    for field in ("inference.prefill_tps", "inference.overhead_ms"):
        assert ENGINE_TIMING in sources[field], sources[field]
    assert "engine_service_total_ms" in sources["inference.decode_tps"]
    # The emulator reports the prefill it applied: uncached tokens / prefill_tps + overhead.
    truth = SPEC.inference
    assert fitted.inference.prefill_tps == pytest.approx(truth.prefill_tps, rel=0.02)
    assert fitted.inference.overhead_ms == pytest.approx(truth.overhead_ms, abs=0.5)
    # The API's costs keep the preset's proportions; the factor that reproduces the API
    # overhead the service reported is the emulator's own scale, 1, less what the fitted
    # workload's token counts differ by.
    factor = fitted.api.validate_fixed_ms / SPEC.api.validate_fixed_ms
    assert factor == pytest.approx(1.0, rel=0.15)


@pytest.mark.live
@pytest.mark.slow
def test_the_plain_loops_processing_time_sets_the_api_fields(
    cli: Cli, traces: dict[str, Path], tmp_path: Path
) -> None:
    sources, fitted = _fit(cli, traces["plain"], tmp_path)
    for field in ("api.validate_fixed_ms", "api.route_cached_ms", "safety.blocking_fixed_ms"):
        assert "openai-processing-ms" in sources[field], sources[field]
    factor = fitted.api.validate_fixed_ms / SPEC.api.validate_fixed_ms
    assert factor == pytest.approx(1.0, rel=0.15)
