"""The corpus's server cases: hostile requests to a running emulator, on 127.0.0.1 only.

A case names the endpoint (``server = "http"`` or ``"ws"``), optional limits
of the emulator (``limits``), idle TCP connections opened first (``idle``), and
what it sends with what must come back:

- ``http``: ``requests``, each with ``body`` (text), optional ``method``,
  ``path`` (``/v1/responses``), ``auth = false``, ``headers``, and the answer's
  ``status`` with, for an error, its ``code`` and ``param``; or a request the
  client leaves (``leave_after_s``) whose pools the server must release within
  ``released_within_s``; ``time_scale`` slows the emulator (default 0.01);
- ``ws``: ``frames`` sent on one connection and ``expect`` per frame: an error
  event (``status``, ``code``, ``param``) or an event ``type``; with ``burst =
  true`` every frame is sent at once and ``expect`` counts the outcomes
  (``count``) in any order.

Placeholders in bodies and frames: ``{valid}`` a valid ``response.create``,
``{create}`` the same as a WebSocket event, ``{deep}`` one whose input nests
3,000 deep, ``{mb:N}`` a valid request carrying an input of N MB.  Every error
is the Responses API's shape: ``{"error": {type, code, message, param}}``
(HTTP) or an ``error`` event with ``status``; a message is one line of at
most a few hundred characters.
"""

from __future__ import annotations

import json
import resource
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx2
import websockets

from models.loading import load_scenario
from sim.testbed.app import CALIBRATION_HEADER
from sim.testbed.limits import Limits
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time

TIME_SCALE = 0.01
"""Wall seconds per scenario second: a valid request completes in well under a second."""
AUTH = {"authorization": f"Bearer {DEFAULT_API_KEY}"}
MAX_MESSAGE_CHARS = 300
FRESH_CONNECTIONS = httpx2.Limits(max_keepalive_connections=0)
"""A new connection per request: the time-scaled server expires idle ones within 0.1 s."""


def create(text: str = "task", extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"model": "m", "input": text, "store": True, **(extra or {})}


def body_text(template: str) -> str:
    if template == "{valid}":
        return json.dumps(create())
    if template == "{create}":
        return json.dumps({"type": "response.create", **create()})
    if template == "{deep}":
        return json.dumps(create()).replace('"task"', "[" * 3000 + "]" * 3000)
    if template.startswith("{mb:"):
        return json.dumps(create("x" * int(float(template[4:-1]) * 2**20)))
    return template


class Servers:
    """One emulator per distinct time scale and set of limits, started when first asked for."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._urls: dict[str, str] = {}

    def url(self, limits: dict[str, Any], time_scale: float = TIME_SCALE) -> str:
        key = json.dumps([limits, time_scale], sort_keys=True)
        if key not in self._urls:
            scenario = scale_time(load_scenario("codex-spark"), time_scale)
            settings = ServerSettings(limits=Limits(**limits))
            self._urls[key] = self._stack.enter_context(emulator_process(scenario, settings))
        return self._urls[key]

    def close(self) -> None:
        self._stack.close()


@contextmanager
def idle_connections(base_url: str, count: int) -> Iterator[None]:
    """``count`` TCP connections to the server that send nothing."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))
    sockets = []
    try:
        for _ in range(count):
            sockets.append(socket.create_connection(("127.0.0.1", _port(base_url)), timeout=10))
        yield
    finally:
        for held in sockets:
            held.close()


def assert_error_shape(error: dict[str, Any], expected: dict[str, Any]) -> None:
    assert set(error) == {"type", "code", "message", "param"}, error
    assert error["type"] == (
        "invalid_request_error" if expected["status"] < 500 else "server_error"
    )
    assert error["code"] == expected["code"], error
    if "param" in expected:
        assert error["param"] == expected["param"], error
    message = error["message"]
    assert "\n" not in message and len(message) <= MAX_MESSAGE_CHARS, message
    assert "Traceback" not in message and "object at 0x" not in message, message


def run_http(case: dict[str, Any], base_url: str) -> None:
    root = base_url.removesuffix("/v1")
    with httpx2.Client(timeout=60, limits=FRESH_CONNECTIONS) as client:
        for request in case["requests"]:
            headers = {**(AUTH if request.get("auth", True) else {}), **request.get("headers", {})}
            body = body_text(request.get("body", "")).encode()
            if "leave_after_s" in request:
                leave_then_check(base_url, body, request)
                continue
            if "content_length" in request:
                status, kind, text = declared_length(base_url, request["content_length"], body)
            else:
                answer = client.request(
                    request.get("method", "POST"),
                    root + request.get("path", "/v1/responses"),
                    content=body,
                    headers={"content-type": "application/json", **headers},
                )
                status, kind, text = answer.status_code, answer.headers["content-type"], answer.text
            assert status == request["status"], (status, text[:300])
            assert kind.startswith("application/json"), kind
            if request["status"] >= 400:
                assert_error_shape(json.loads(text)["error"], request)


def leave_then_check(base_url: str, body: bytes, request: dict[str, Any]) -> None:
    """Send a request, disconnect after ``leave_after_s``, then see the server release its
    pools within ``released_within_s``."""
    with socket.create_connection(("127.0.0.1", _port(base_url)), timeout=30) as connection:
        connection.sendall(_head(len(body)) + body)
        time.sleep(request["leave_after_s"])
        assert _stats(base_url)["in_flight"] == 1, "the request was still running"
    deadline_s = time.monotonic() + request["released_within_s"]
    while time.monotonic() < deadline_s:
        stats = _stats(base_url)
        if stats["in_flight"] == 0 and not any(stats["busy"].values()):
            return
        time.sleep(0.05)
    raise AssertionError(f"the server still holds the request: {_stats(base_url)}")


def _stats(base_url: str) -> dict[str, Any]:
    return httpx2.get(base_url + "/testbed/stats", headers=AUTH, timeout=30).json()


def _port(base_url: str) -> int:
    return int(base_url.rsplit(":", 1)[1].split("/")[0])


def _head(length: int) -> bytes:
    return (
        "POST /v1/responses HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"authorization: {AUTH['authorization']}\r\ncontent-type: application/json\r\n"
        f"content-length: {length}\r\n\r\n"
    ).encode()


def declared_length(base_url: str, length: int, body: bytes) -> tuple[int, str, str]:
    """A POST whose head declares ``length`` bytes and which sends ``body`` only (a client
    library refuses to); the answer's status, content type and text."""
    with socket.create_connection(("127.0.0.1", _port(base_url)), timeout=30) as connection:
        connection.sendall(_head(length) + body)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
    head_text, _, text = answer.decode().partition("\r\n\r\n")
    lines = head_text.split("\r\n")
    fields = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), fields.get("content-type", ""), text


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


async def run_ws(case: dict[str, Any], base_url: str) -> None:
    url = base_url.replace("http://", "ws://") + "/responses"
    headers = {**AUTH, CALIBRATION_HEADER: "1"}
    async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
        if case.get("burst"):
            await run_burst(ws, case)
            return
        for frame, expected in zip(case["frames"], case["expect"], strict=True):
            await ws.send(body_text(frame))
            assert_event(await outcome(ws), expected)


async def run_burst(ws: Any, case: dict[str, Any]) -> None:
    """Every frame sent at once; the outcomes, in any order, are ``expect``'s (with counts)."""
    for frame in case["frames"]:
        await ws.send(body_text(frame))
    outcomes = [await outcome(ws) for _ in case["frames"]]
    for expected in case["expect"]:
        matching = [event for event in outcomes if _matches(event, expected)]
        assert len(matching) == expected["count"], (expected, [e["type"] for e in outcomes])
        for event in matching:
            assert_event(event, expected)


async def outcome(ws: Any) -> dict[str, Any]:
    """The next event that ends a request: an error or a completed response."""
    while True:
        event = json.loads(await ws.recv())
        if event["type"] in ("error", "response.completed"):
            return event


def _matches(event: dict[str, Any], expected: dict[str, Any]) -> bool:
    if "status" in expected:
        return event["type"] == "error" and event["status"] == expected["status"]
    return event["type"] == expected["type"]


def assert_event(event: dict[str, Any], expected: dict[str, Any]) -> None:
    assert _matches(event, expected), (event, expected)
    if "status" in expected:
        assert_error_shape(event["error"], expected)
