"""``loopbudget testbed``: bad input is one line and exit code 2; a run prints the documented
JSON; ``testbed serve`` serves any client; ``--base-url`` drives another endpoint."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import openai
import pytest
from support import CliResult, assert_one_line_error, scenario

from sim.testbed import clock
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.session import Request, run_testbed
from sim.testbed.timescale import scale_time
from sim.turn.transports import Transport

pytestmark = pytest.mark.live

Cli = Callable[..., CliResult]
LOOPBUDGET = Path(sys.executable).with_name("loopbudget")


@pytest.mark.parametrize(
    ("args", "mentions"),
    [
        (["testbed", "codex-spark:ws-append"], ["ws-append", "ws"]),
        (["testbed", "codex-spark", "--time-scale", "0"], ["--time-scale", "> 0"]),
        (["testbed", "codex-spark", "--rollouts", "0"], ["--rollouts", ">= 1"]),
        (["testbed", "nope:ws"], ["preset", "'nope'"]),
        (["testbed", "serve", "codex-spark", "--time-scale", "-1"], ["--time-scale"]),
    ],
    ids=["ws-append", "zero scale", "no rollouts", "unknown preset", "serve scale"],
)
def test_bad_input_is_one_line(cli: Cli, args: list[str], mentions: list[str]) -> None:
    assert_one_line_error(cli(*args), *mentions)


def test_a_run_prints_the_documented_json(cli: Cli) -> None:
    result = cli("testbed", "codex-spark:ws", "-n", "1", "--time-scale", "0.05", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["time_scale"] == 0.05
    entry = payload["transports"]["ws"]
    for side in ("measured", "simulated"):
        assert set(entry[side]["e2e_s"]) >= {"mean", "p95"}
        assert entry[side]["connections_per_rollout"] >= 1
    assert payload["reduction"] == {"measured": None, "simulated": None}


def test_serve_prints_its_base_url_and_answers_the_sdk() -> None:
    command = [str(LOOPBUDGET), "testbed", "serve", "codex-spark", "--time-scale", "0.02"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        base_url = line.split()[3]
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")

        async def ask() -> str:
            async with openai.AsyncOpenAI(base_url=base_url, api_key=DEFAULT_API_KEY) as client:
                response = await client.responses.create(model="any", input="hello")
                return response.status

        assert clock.run(ask) == "completed"
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=20)
        server.stdout.close()


def test_the_driver_runs_against_another_endpoint() -> None:
    """With ``--base-url`` there is no log to calibrate from: the simulation takes the
    scenario's own client and network, and the measured side is still complete."""
    spark = scenario("codex-spark", "workload.tool_calls_per_rollout=4")
    with emulator_process(scale_time(spark, 0.05), ServerSettings()) as url:
        request = Request("other", spark, (Transport.WS,), 2, 0.05, base_url=url)
        result = run_testbed(request)
    entry = result.transports["ws"]
    assert entry.errors == 0
    assert entry.measured.connections_per_rollout == 1
    assert entry.measured.e2e_mean_s > 0 and result.client == {}
