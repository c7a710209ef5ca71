"""The forwarding: every request to the upstream and every byte and event back, unchanged.

A raw ASGI application.  HTTP requests go upstream over kept-alive connections
of its own (``upstream``) with their headers (authorization included) less the
hop-by-hop ones; the response's status, headers and body come back as the upstream sent them (raw,
compression kept), chunk by chunk as they arrive.  A WebSocket opens its own
upstream WebSocket with the client's headers and relays frames both ways until
either side closes (its close code passed on); an upgrade the upstream refuses
is refused with the upstream's status and body.  ``POST .../responses`` and each
``response.create`` frame are recorded (``exchange``, ``chains``); the rest pass
through unrecorded.  Nothing is written down but the recorded fields: no header,
no key.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from starlette.types import Receive, Scope, Send
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus, WebSocketException

from sim.record.arrival import arrived_at_s
from sim.record.body import BodyReader
from sim.record.chains import Chains
from sim.record.exchange import Exchange, parse
from sim.record.upstream import Response, Upstream, UpstreamError
from sim.record.websocket import RelayedSocket

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"te",
        b"trailer",
        b"upgrade",
        b"host",
    }
)
_WS_OWN = (b"sec-websocket-", b"content-length")
"""Headers of the client's upgrade that belong to its own handshake, not the upstream's."""
PROCESSING_HEADER = b"openai-processing-ms"
Keep = Callable[[str, Any], None]


class Recorder:
    """The proxy in front of one upstream base URL, and what it recorded."""

    def __init__(self, upstream: str, keep: Keep | None = None) -> None:
        parts = urlsplit(upstream.rstrip("/"))
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.base_path = parts.path
        self.server_address = parts.hostname or ""
        self.ws_origin = self.origin.replace("http", "ws", 1)
        self.chains = Chains()
        self.keep = keep
        self.added_s: list[float] = []
        self._connections: dict[tuple[str, int], str] = {}
        self._sockets = 0
        # Made now, not on the first request: an https upstream's TLS context loads the
        # trust store (tens of milliseconds), which the first request would carry.
        self._upstream = Upstream(self.origin)

    async def close(self) -> None:
        await self._upstream.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)

    def _recorded(self, scope: Scope) -> bool:
        return scope["path"].rstrip("/").endswith("/responses")

    def _target(self, scope: Scope, origin: str) -> str:
        query = scope.get("query_string") or b""
        path = scope.get("raw_path") or scope["path"].encode()
        return origin + path.decode() + (f"?{query.decode()}" if query else "")

    def _connection(self, scope: Scope) -> tuple[str, bool]:
        """The client's connection (its address and port) and whether it served before."""
        client = tuple(scope.get("client") or ("", 0))
        known = self._connections.get(client)
        if known is not None:
            return known, True
        known = self._connections[client] = f"http-{len(self._connections)}"
        return known, False

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        taken_s = arrived_at_s(scope)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in HOP_BY_HOP]
        exchange = None
        if scope["method"] == "POST" and self._recorded(scope):
            connection_id, reused = self._connection(scope)
            exchange = Exchange("http", connection_id, reused, taken_s, self.server_address)
        try:
            response = await self._upstream.send(scope["method"], _path(scope), headers, body)
        except UpstreamError as error:
            await _bad_gateway(send, error)
            if exchange is not None:
                exchange.error_type = "upstream_unreachable"
            return
        if exchange is not None:
            self._read_request(exchange, body)
        try:
            await self._relay_http(exchange, response, send, response.sent_at_s - taken_s)
        finally:
            await response.close()

    def _read_request(self, exchange: Exchange, body: bytes) -> None:
        parsed = parse(body)
        if parsed is not None:
            exchange.read_request(parsed)
            if self.keep is not None:
                self.keep("request", parsed)
        self.chains.place(exchange)

    async def _relay_http(
        self, exchange: Exchange | None, response: Response, send: Send, up_s: float
    ) -> None:
        headers = [(k, v) for k, v in response.headers if k not in HOP_BY_HOP]
        await send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        reader = BodyReader(response.header(b"content-encoding") or "", exchange)
        if exchange is not None:
            exchange.processing_ms = _number(response.header(PROCESSING_HEADER))
            if response.status_code >= 400:
                exchange.error_type = str(response.status_code)
        last_s = 0.0
        async for chunk in response.body():
            got_s = time.monotonic()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            passed_s = time.monotonic()
            last_s = passed_s - got_s
            reader.feed(chunk, passed_s)
        got_s = time.monotonic()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        ended_s = time.monotonic()
        if exchange is None:
            return
        reader.finish(ended_s)
        if exchange.ended_at_s is None:
            exchange.ended_at_s = ended_s
        exchange.added_s = up_s + last_s + (ended_s - got_s)
        self.added_s.append(exchange.added_s)
        self.chains.ended(exchange)
        if self.keep is not None and reader.response is not None:
            self.keep("response", reader.response)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        await receive()  # websocket.connect
        headers = [
            (k.decode(), v.decode())
            for k, v in scope["headers"]
            if k.lower() not in HOP_BY_HOP and not k.lower().startswith(_WS_OWN)
        ]
        try:
            upstream = await connect(
                self._target(scope, self.ws_origin),
                additional_headers=headers,
                max_size=None,
                ping_interval=None,
                user_agent_header=None,
            )
        except InvalidStatus as refused:
            await _deny(send, refused.response)
            return
        except (OSError, WebSocketException) as error:
            await _deny_unreachable(send, error)
            return
        await send({"type": "websocket.accept"})
        socket = RelayedSocket(self, f"ws-{self._sockets}", upstream, send)
        self._sockets += 1
        up = asyncio.create_task(socket.client_to_upstream(receive, self._recorded(scope)))
        down = asyncio.create_task(socket.upstream_to_client())
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
            await asyncio.gather(up, down, return_exceptions=True)
            await upstream.close()


async def _bad_gateway(send: Send, error: Exception) -> None:
    body = (
        '{"error": {"type": "proxy_error", "code": "upstream_unreachable", "message": '
        f'"{type(error).__name__}"}}}}'
    ).encode()
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 502, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _deny(send: Send, response: Any) -> None:
    headers = [
        (k.lower().encode(), v.encode())
        for k, v in response.headers.raw_items()
        if k.lower().encode() not in HOP_BY_HOP and k.lower() != "content-length"
    ]
    start = {"type": "websocket.http.response.start", "status": response.status_code}
    await send({**start, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": response.body or b""})


async def _deny_unreachable(send: Send, error: Exception) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "websocket.http.response.start", "status": 502, "headers": headers})
    body = f'{{"error": {{"type": "proxy_error", "message": "{type(error).__name__}"}}}}'
    await send({"type": "websocket.http.response.body", "body": body.encode()})


def _path(scope: Scope) -> bytes:
    """The request's path and query, as the client sent them."""
    query = scope.get("query_string") or b""
    path = scope.get("raw_path") or scope["path"].encode()
    return path + (b"?" + query if query else b"")


def _number(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None
