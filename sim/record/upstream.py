"""HTTP/1.1 to the upstream: kept-alive connections, the response's body streamed as it comes.

The proxy only forwards: it writes the client's request (its headers, less the
hop-by-hop ones, and its body) in one write and hands each piece of the response
body on as it arrives, de-chunked but otherwise as sent (compression kept).  A
general client (httpx) spends on each request and chunk the CPU its features need
(timeouts around every read, redirects, cookies, a task group per connection); this
one is a socket, the compiled ``httptools`` parser and a pool of idle connections.
A kept-alive connection the upstream has closed meanwhile is replaced once, before
any of its response has been read.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httptools

_READ_BYTES = 1 << 16
_KEEP_IDLE = 100
"""Idle connections kept (the proxy's clients are few; more are opened as needed)."""


class UpstreamError(OSError):
    """The upstream could not be reached, or broke off a response."""


@dataclass
class _Response:
    """What the parser has read of one response."""

    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    headers_done: asyncio.Event = field(default_factory=asyncio.Event)
    chunks: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    complete: bool = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.headers_done.set()

    def on_body(self, body: bytes) -> None:
        self.chunks.put_nowait(body)

    def on_message_complete(self) -> None:
        self.complete = True
        self.chunks.put_nowait(None)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def close(self) -> None:
        self.writer.close()


class Response:
    """A response being received: its status and headers, then its body as it comes."""

    def __init__(
        self,
        pool: Upstream,
        connection: _Connection,
        parser: httptools.HttpResponseParser,
        state: _Response,
        reading: asyncio.Task[None],
    ) -> None:
        self._pool, self._connection, self._parser = pool, connection, parser
        self._state, self._reading = state, reading
        self.sent_at_s = 0.0
        """When the request had been written to the upstream (monotonic seconds)."""
        self.status_code = parser.get_status_code()
        self.headers = state.headers

    def header(self, name: bytes) -> str | None:
        return next((v.decode("latin-1") for k, v in self.headers if k == name), None)

    async def body(self) -> AsyncIterator[bytes]:
        """The body's pieces as they arrive; raises ``UpstreamError`` if it broke off."""
        while (chunk := await self._state.chunks.get()) is not None:
            yield chunk
        await self._reading

    async def close(self) -> None:
        """Give the connection back when the response was read whole and may be kept."""
        reading = self._reading
        if not reading.done():
            reading.cancel()
        await asyncio.gather(reading, return_exceptions=True)
        if self._state.complete and self._parser.should_keep_alive():
            self._pool.release(self._connection)
        else:
            self._connection.close()


class Upstream:
    """Requests to one origin (``http://host:port`` or ``https://...``)."""

    def __init__(self, origin: str) -> None:
        parts = urlsplit(origin)
        self.host = parts.hostname or ""
        self.netloc = parts.netloc.encode()
        self.tls = ssl.create_default_context() if parts.scheme == "https" else None
        self.port = parts.port or (443 if self.tls else 80)
        self._idle: list[_Connection] = []

    def release(self, connection: _Connection) -> None:
        if len(self._idle) < _KEEP_IDLE:
            self._idle.append(connection)
        else:
            connection.close()

    async def close(self) -> None:
        while self._idle:
            self._idle.pop().close()

    async def send(
        self, method: str, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Response:
        """Send a request; its response once the headers are in."""
        head = [b"%s %s HTTP/1.1\r\nhost: %s\r\n" % (method.encode(), target, self.netloc)]
        head += [b"%s: %s\r\n" % (k, v) for k, v in headers if k.lower() != b"content-length"]
        head.append(b"content-length: %d\r\n\r\n" % len(body))
        message = b"".join(head) + body
        for reused in (True, False):
            connection = await self._connection(reused)
            if connection is None:
                continue
            state = _Response()
            parser = httptools.HttpResponseParser(state)
            reading = asyncio.create_task(_read(connection, parser, state))
            try:
                connection.writer.write(message)
                await connection.writer.drain()
                sent_at_s = time.monotonic()
                await _first(state, reading)
            except (OSError, UpstreamError) as error:
                connection.close()
                reading.cancel()
                if reused and not state.headers_done.is_set():
                    continue
                raise UpstreamError(str(error)) from error
            response = Response(self, connection, parser, state, reading)
            response.sent_at_s = sent_at_s
            return response
        raise UpstreamError("no connection")

    async def _connection(self, reused: bool) -> _Connection | None:
        if reused:
            return self._idle.pop() if self._idle else None
        try:
            reader, writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.tls, limit=_READ_BYTES
            )
        except OSError as error:
            raise UpstreamError(str(error)) from error
        return _Connection(reader, writer)


async def _first(state: _Response, reading: asyncio.Task[None]) -> None:
    """Wait for the response's headers (or the reading to fail first)."""
    headers = asyncio.ensure_future(state.headers_done.wait())
    await asyncio.wait({headers, reading}, return_when=asyncio.FIRST_COMPLETED)
    if not state.headers_done.is_set():
        headers.cancel()
        reading.result()
        raise UpstreamError("the upstream closed the connection before responding")


async def _read(
    connection: _Connection, parser: httptools.HttpResponseParser, state: _Response
) -> None:
    """Feed the parser until the response is complete (or the upstream closes)."""
    while not state.complete:
        data = await connection.reader.read(_READ_BYTES)
        if not data:
            # A body delimited by the connection's end, or one cut short: either way the
            # client gets what was sent, and the connection is not kept.
            state.chunks.put_nowait(None)
            return
        try:
            parser.feed_data(data)
        except httptools.HttpParserError as error:
            state.chunks.put_nowait(None)
            raise UpstreamError(f"a malformed response ({error})") from error
