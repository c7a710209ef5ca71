"""``POST /v1/responses`` over HTTP: a JSON response, or server-sent events when ``stream``.

The body is read no further than the body limit (413 beyond it), checked as
the API checks it (400 with its ``param``), and served; a client that
disconnects cancels its response at once, streamed or not, so its pools are
released (a non-streaming request used to hold them for its whole run).
Whatever fails inside the service is answered in the service's error shape
(a 500 ``server_error`` body, or an ``error`` event in a stream that has
begun), never uvicorn's plain-text "Internal Server Error".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from sim.testbed.emulator import Emulator
from sim.testbed.limits import Limits
from sim.testbed.protocol import SERVER_ERROR, ApiError, Event, log_failure, sse
from sim.testbed.request_check import parse_body
from sim.testbed.timing import service_headers


class ClientLeft(Exception):
    """The client disconnected before its response was sent."""


async def respond(emulator: Emulator, scope: Scope, receive: Receive, send: Send) -> None:
    """Serve one ``POST /v1/responses`` (its caller has checked the API key)."""
    arrived_s = time.monotonic()
    sent = _Sent(send)
    try:
        await _respond(emulator, arrived_s, scope, receive, sent)
    except ClientLeft:
        return
    except Exception as error:  # a failure inside the service: answered, logged, survived
        log_failure(error)
        if not sent.began:
            headers = service_headers(arrived_s)
            answer = JSONResponse(SERVER_ERROR.http_json(), SERVER_ERROR.status, headers)
            await answer(scope, receive, send)


async def _respond(
    emulator: Emulator, arrived_s: float, scope: Scope, receive: Receive, send: Send
) -> None:
    try:
        body = parse_body(await bounded_body(scope, receive, emulator.limits))
        prepared = emulator.prepare(body, http=True, cache=None)
    except ApiError as error:
        await emulator.refuse(error, arrived_s, "http")
        headers = service_headers(arrived_s)
        await JSONResponse(error.http_json(), error.status, headers)(scope, receive, send)
        return
    if body.get("stream") is not True:
        events: list[Event] = []

        async def collect(event: Event) -> None:
            events.append(event)

        run = emulator.run(prepared, collect, arrived_s, "http")
        if await unless_client_leaves(run, receive):
            headers = service_headers(arrived_s)
            await JSONResponse(events[-1]["response"], headers=headers)(scope, receive, send)
        return
    await _stream_events(emulator, prepared, arrived_s, receive, send)


async def unless_client_leaves(work: Coroutine[Any, Any, Any], receive: Receive) -> bool:
    """Run ``work`` unless the client disconnects first, which cancels it (its pools are
    released at once); whether it finished.  A failure inside ``work`` is raised."""
    runner = asyncio.create_task(work)
    watcher = asyncio.create_task(_disconnected(receive))
    try:
        await asyncio.wait({runner, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (runner, watcher):
            task.cancel()
        await asyncio.gather(runner, watcher, return_exceptions=True)
    if runner.cancelled():
        return False
    runner.result()
    return True


async def bounded_body(scope: Scope, receive: Receive, limits: Limits) -> bytes:
    """The request body, read no further than ``limits.max_body_bytes`` (else a 413)."""
    most = limits.max_body_bytes
    declared = dict(scope["headers"]).get(b"content-length", b"0")
    if declared.isdigit() and int(declared) > most:
        raise _too_large(int(declared), most)
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientLeft
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > most:
            raise _too_large(size, most)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _too_large(size: int, most: int) -> ApiError:
    return ApiError(
        413,
        "request_too_large",
        f"The request body has {size:,} bytes or more; at most {most:,} are read.",
    )


class _Sent:
    """``send``, remembering whether the response has begun."""

    def __init__(self, send: Send) -> None:
        self._send, self.began = send, False

    async def __call__(self, message: Message) -> None:
        self.began = self.began or message["type"] == "http.response.start"
        await self._send(message)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _stream_events(
    emulator: Emulator, prepared: Any, arrived_s: float, receive: Receive, send: Send
) -> None:
    """Server-sent events through a writer task (a slow reader never holds up the service);
    a client that disconnects cancels the response at once; a failure inside the service
    ends the stream with an ``error`` event."""
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    headers += [(k.encode(), v.encode()) for k, v in service_headers(arrived_s).items()]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    outbox: asyncio.Queue[Event | None] = asyncio.Queue()

    async def emit(event: Event) -> None:
        outbox.put_nowait(event)

    async def run() -> None:
        try:
            await emulator.run(prepared, emit, arrived_s, "http")
        except Exception as error:  # the stream has begun: its last event says so
            log_failure(error)
            outbox.put_nowait(SERVER_ERROR.stream_event())
        outbox.put_nowait(None)

    async def write() -> None:
        while (event := await outbox.get()) is not None:
            await send({"type": "http.response.body", "body": sse(event), "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    runner = asyncio.create_task(run())
    writer = asyncio.create_task(write())
    watcher = asyncio.create_task(_disconnected(receive))
    try:
        await asyncio.wait({writer, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (runner, writer, watcher):
            task.cancel()
        await asyncio.gather(runner, writer, watcher, return_exceptions=True)
