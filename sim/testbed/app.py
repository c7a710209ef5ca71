"""The emulator as an ASGI application: ``/v1/responses`` over HTTP, SSE and WebSocket.

``POST /v1/responses`` answers with JSON, or with server-sent events when
``stream`` is true; the same path upgrades to WebSocket mode.  Every request
needs ``Authorization: Bearer <key>``.  ``/v1/testbed/log``, ``/stats`` and
``/pools`` give the driver the server's side of each request; a client that
goes away mid-response cancels it, and its pools are released.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from sim.des.streams import Draw, stream
from sim.testbed.emulator import Emulator
from sim.testbed.protocol import ApiError, Event, sse
from sim.testbed.timing import service_headers
from sim.testbed.ws_connection import Socket

CALIBRATION_HEADER = "x-loopbudget-calibration"
"""A connection used to measure the client; it takes no connection-fault draw."""


class Service:
    """The routes around one emulator."""

    def __init__(self, emulator: Emulator, api_key: str, max_frame_bytes: int) -> None:
        self.emulator, self.api_key, self.max_frame_bytes = emulator, api_key, max_frame_bytes
        scenario = emulator.scenario
        self._faults = stream(scenario.seed, 0, Draw.CONNECTION_FAULTS)
        self._numbers = itertools.count()
        self.open_sockets = 0
        self.peak_sockets = 0

    def _authorized(self, headers: Any) -> bool:
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/responses", _Asgi(self.http), methods=["POST"]),
                WebSocketRoute("/v1/responses", self.websocket),
                Route("/v1/testbed/log", self.log_endpoint),
                Route("/v1/testbed/stats", self.stats_endpoint),
                Route("/v1/testbed/pools", self.pools_endpoint),
            ]
        )

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /v1/responses`` as a raw ASGI app, so a disconnect cancels the response."""
        arrived_s = time.monotonic()
        request = Request(scope, receive)
        if not self._authorized(request.headers):
            error = ApiError(401, "invalid_api_key", "Incorrect API key provided.")
            headers = service_headers(arrived_s)
            await JSONResponse(error.http_json(), 401, headers)(scope, receive, send)
            return
        try:
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise ValueError("not an object")
            prepared = self.emulator.prepare(body, http=True, cache=None)
        except (ValueError, ApiError) as problem:
            error = (
                problem
                if isinstance(problem, ApiError)
                else ApiError(400, "invalid_json", str(problem))
            )
            await self.emulator.refuse(error, arrived_s, "http")
            headers = service_headers(arrived_s)
            await JSONResponse(error.http_json(), error.status, headers)(scope, receive, send)
            return
        if body.get("stream") is not True:
            events: list[Event] = []

            async def collect(event: Event) -> None:
                events.append(event)

            await self.emulator.run(prepared, collect, arrived_s, "http")
            headers = service_headers(arrived_s)
            await JSONResponse(events[-1]["response"], headers=headers)(scope, receive, send)
            return
        await _stream_events(self.emulator, prepared, arrived_s, receive, send)

    async def websocket(self, websocket: WebSocket) -> None:
        if not self._authorized(websocket.headers):
            error = ApiError(401, "invalid_api_key", "Incorrect API key provided.")
            await websocket.send_denial_response(JSONResponse(error.http_json(), 401))
            return
        await websocket.accept()
        c = self.emulator.scenario.connection
        socket = Socket(
            self.emulator, websocket, next(self._numbers), c.ws_lifetime_s, self.max_frame_bytes
        )
        if CALIBRATION_HEADER not in websocket.headers:
            socket.drop_after(self._faults, c.ws_drops_per_hour)
        self.open_sockets += 1
        self.peak_sockets = max(self.peak_sockets, self.open_sockets)
        try:
            await socket.serve()
        finally:
            self.open_sockets -= 1

    async def log_endpoint(self, request: Request) -> JSONResponse:
        offset = int(request.query_params.get("since", "0"))
        records = self.emulator.log.since(offset)
        return JSONResponse({"records": records, "next": offset + len(records)})

    async def stats_endpoint(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "tasks": len(asyncio.all_tasks()),
                "in_flight": self.emulator.in_flight,
                "background": len(self.emulator.background),
                "open_sockets": self.open_sockets,
                "peak_sockets": self.peak_sockets,
                "busy": {p.value: pool.busy for p, pool in self.emulator.pools.pools.items()},
                "timer_lead_s": self.emulator.lead.lead_s,
                "timer_lateness_s": self.emulator.lead.lateness_s(),
            }
        )

    async def pools_endpoint(self, request: Request) -> JSONResponse:
        start_s = float(request.query_params["start"])
        end_s = float(request.query_params["end"])
        return JSONResponse({"utilization": self.emulator.pools.utilization(start_s, end_s)})


class _Asgi:
    """A coroutine taken by Starlette's router as an ASGI app (not a request handler)."""

    def __init__(self, handler: Any) -> None:
        self._handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._handler(scope, receive, send)


async def _stream_events(
    emulator: Emulator, prepared: Any, arrived_s: float, receive: Receive, send: Send
) -> None:
    """Server-sent events through a writer task (a slow reader never holds up the service);
    a client that disconnects cancels the response at once."""
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    headers += [(k.encode(), v.encode()) for k, v in service_headers(arrived_s).items()]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    outbox: asyncio.Queue[Event | None] = asyncio.Queue()

    async def emit(event: Event) -> None:
        outbox.put_nowait(event)

    async def respond() -> None:
        await emulator.run(prepared, emit, arrived_s, "http")
        outbox.put_nowait(None)

    async def write() -> None:
        while (event := await outbox.get()) is not None:
            await send({"type": "http.response.body", "body": sse(event), "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    runner = asyncio.create_task(respond())
    writer = asyncio.create_task(write())
    watcher = asyncio.create_task(disconnected())
    try:
        await asyncio.wait({writer, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (runner, writer, watcher):
            task.cancel()
        await asyncio.gather(runner, writer, watcher, return_exceptions=True)
