"""Fuzzing the testbed's HTTP and WebSocket endpoints and the Python API (``fuzz_servers``).

Every request to the emulator (on 127.0.0.1) gets a status the service uses
(200, 400, 401, 404, 405, 413, 429), JSON in the service's error shape for an
error, and never a 500; every WebSocket frame gets an ``error`` event or a
response, and the lane it used still answers a valid request afterwards.
Every API call returns a result or raises ``ScenarioError``.  Derandomized and
bounded like the command line's fuzzing: the same examples every run, a few
dozen each.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
import websockets
from fuzz_servers import API_ARGUMENTS, BODIES, FRAMES, METHODS, OVERRIDES, TESTBED_PATHS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_cases import AUTH, FRESH_CONNECTIONS, assert_error_shape

from models.errors import ScenarioError
from models.loading import load_scenario
from sim import api
from sim.testbed import clock
from sim.testbed.app import CALIBRATION_HEADER
from sim.testbed.limits import MB, Limits
from sim.testbed.server import ServerSettings, emulator_process
from sim.testbed.timescale import scale_time

pytestmark = [pytest.mark.slow, pytest.mark.live]

FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
STATUSES = {200, 400, 401, 404, 405, 413, 429}
ANSWER_TIMEOUT_S = 20.0
VALID_CREATE = json.dumps({"type": "response.create", "model": "m", "input": "ok"})


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    scenario = scale_time(load_scenario("codex-spark"), 0.01)
    settings_ = ServerSettings(limits=Limits(max_body_bytes=MB, ws_queue_length=8))
    with emulator_process(scenario, settings_) as url:
        yield url


def check_answer(answer: httpx2.Response) -> None:
    assert answer.status_code in STATUSES, (answer.status_code, answer.text[:300])
    kind = answer.headers.get("content-type", "")
    if answer.status_code >= 400:
        assert kind.startswith("application/json"), (kind, answer.text[:300])
        error = answer.json()["error"]
        assert_error_shape(error, {"status": answer.status_code, "code": error["code"]})


@FUZZ
@given(body=BODIES, authorized=st.booleans())
def test_generated_request_bodies(base_url: str, body: str, authorized: bool) -> None:
    with httpx2.Client(timeout=60, limits=FRESH_CONNECTIONS) as client:
        headers = {"content-type": "application/json", **(AUTH if authorized else {})}
        check_answer(client.post(base_url + "/responses", content=body.encode(), headers=headers))


@FUZZ
@given(path=TESTBED_PATHS, method=METHODS, body=BODIES)
def test_generated_paths_methods_and_query_parameters(
    base_url: str, path: str, method: str, body: str
) -> None:
    root = base_url.removesuffix("/v1")
    with httpx2.Client(timeout=60, limits=FRESH_CONNECTIONS) as client:
        content = body.encode() if method in ("POST", "PUT") else None
        check_answer(client.request(method, root + path, content=content, headers=AUTH))


@FUZZ
@given(frames=st.lists(FRAMES, min_size=1, max_size=4))
def test_generated_websocket_frames(base_url: str, frames: list[str]) -> None:
    clock.run(lambda: _frames(base_url, frames))


async def _frames(base_url: str, frames: list[str]) -> None:
    url = base_url.replace("http://", "ws://") + "/responses"
    headers = {**AUTH, CALIBRATION_HEADER: "1"}
    async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
        for frame in [*frames, VALID_CREATE]:
            await ws.send(frame)
            event = await asyncio.wait_for(_outcome(ws), ANSWER_TIMEOUT_S)
            if event["type"] == "error":
                assert event["status"] in STATUSES, event
                assert_error_shape(
                    event["error"], {"status": event["status"], "code": event["error"]["code"]}
                )
        assert event["type"] == "response.completed", "the default lane answers at the end"


async def _outcome(ws: Any) -> dict[str, Any]:
    while True:
        event = json.loads(await ws.recv())
        if event["type"] in ("error", "response.completed"):
            return event


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Caps low enough that any accepted call runs in well under a second."""
    monkeypatch.setenv("LOOPBUDGET_MAX_TURNS", "20000")
    monkeypatch.setenv("LOOPBUDGET_MAX_MEMORY_MB", "256")


CALLS = st.sampled_from(["run", "scenario", "compare", "load_curve", "capacity_estimate"])


@FUZZ
@given(
    call=CALLS,
    target=API_ARGUMENTS,
    other=API_ARGUMENTS,
    overrides=OVERRIDES,
    number=API_ARGUMENTS,
    engine=st.sampled_from(["analytic", "des", "quantum"]) | API_ARGUMENTS,
)
def test_generated_api_calls(
    small_caps: None,
    call: str,
    target: Any,
    other: Any,
    overrides: Any,
    number: Any,
    engine: Any,
) -> None:
    calls = {
        "run": lambda: api.run(target, engine=engine, rollouts=number, overrides=overrides),
        "scenario": lambda: api.scenario(target, overrides, seed=number),
        "compare": lambda: api.compare(target, other, engine=engine, rollouts=number),
        "load_curve": lambda: api.load_curve(target, agents=other, overrides=overrides),
        "capacity_estimate": lambda: api.capacity_estimate(
            target, slos={"ttft_p95_s": number}, max_agents=other
        ),
    }
    try:
        calls[call]()
    except ScenarioError as error:
        message = str(error)
        assert "\n" not in message and len(message) <= 1000, message
