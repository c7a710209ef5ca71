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
import time
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from sim.des.streams import Draw, stream
from sim.testbed.emulator import Emulator
from sim.testbed.http_errors import ERROR_HANDLERS, UNAUTHORIZED, query_count, query_window
from sim.testbed.http_responses import respond
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
        """The routes; the testbed's own endpoints need the API key as the API's do, and
        every error, a wrong URL included, has the service's shape."""
        private = [Middleware(_KeyRequired, service=self)]
        return Starlette(
            routes=[
                Route("/v1/responses", _Asgi(self.http), methods=["POST"]),
                WebSocketRoute("/v1/responses", self.websocket),
                Mount(
                    "/v1/testbed",
                    routes=[
                        Route("/log", self.log_endpoint),
                        Route("/stats", self.stats_endpoint),
                        Route("/pools", self.pools_endpoint),
                    ],
                    middleware=private,
                ),
            ],
            exception_handlers=ERROR_HANDLERS,
        )

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /v1/responses`` as a raw ASGI app, so a disconnect cancels the response."""
        if not self._authorized(Headers(scope=scope)):
            headers = service_headers(time.monotonic())
            await JSONResponse(UNAUTHORIZED.http_json(), 401, headers)(scope, receive, send)
            return
        await respond(self.emulator, scope, receive, send)

    async def websocket(self, websocket: WebSocket) -> None:
        if not self._authorized(websocket.headers):
            await websocket.send_denial_response(JSONResponse(UNAUTHORIZED.http_json(), 401))
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
        offset = query_count(request, "since")
        records = self.emulator.log.since(offset)
        return JSONResponse({"records": records, "next": len(self.emulator.log)})

    async def stats_endpoint(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "tasks": len(asyncio.all_tasks()),
                "in_flight": self.emulator.in_flight,
                "background": len(self.emulator.background),
                "open_sockets": self.open_sockets,
                "stored_responses": len(self.emulator.store),
                "stored_bytes": self.emulator.store.bytes,
                "peak_sockets": self.peak_sockets,
                "busy": {p.value: pool.busy for p, pool in self.emulator.pools.pools.items()},
                "timer_lead_s": self.emulator.lead.lead_s,
                "timer_lateness_s": self.emulator.lead.lateness_s(),
            }
        )

    async def pools_endpoint(self, request: Request) -> JSONResponse:
        start_s, end_s = query_window(request)
        return JSONResponse({"utilization": self.emulator.pools.utilization(start_s, end_s)})


class _KeyRequired:
    """ASGI middleware: a request without the service's API key gets the API's 401."""

    def __init__(self, app: Any, service: Service) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.service._authorized(Headers(scope=scope)):
            await JSONResponse(UNAUTHORIZED.http_json(), 401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _Asgi:
    """A coroutine taken by Starlette's router as an ASGI app (not a request handler)."""

    def __init__(self, handler: Any) -> None:
        self._handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._handler(scope, receive, send)
