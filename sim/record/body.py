"""Reading a response body as it passes through the proxy: server-sent events or JSON.

Chunks are read after they were passed on.  Events are split on blank lines; an
event's type is read from its first bytes, and only the events the record needs
(the first output item, the end of the response, errors) are parsed.  A gzip or
deflate body is inflated on the side; any other encoding passes unread.
"""

from __future__ import annotations

import zlib
from typing import Any

from sim.record.exchange import FIRST_OUTPUT, Exchange, event_type, parse, wanted


class BodyReader:
    """Reads a streamed (server-sent events) or whole JSON body as it passes through."""

    def __init__(self, encoding: str, exchange: Exchange | None) -> None:
        self.exchange = exchange
        self.response: dict[str, Any] | None = None
        self._inflate = (
            zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)
            if encoding in ("gzip", "deflate")
            else None
        )
        self._readable = encoding in ("", "identity", "gzip", "deflate")
        self._buffer = b""

    def feed(self, chunk: bytes, passed_s: float) -> None:
        exchange = self.exchange
        if exchange is None or not self._readable:
            return
        if self._inflate is not None:
            chunk = self._inflate.decompress(chunk)
        self._buffer += chunk
        while b"\n\n" in self._buffer:
            block, self._buffer = self._buffer.split(b"\n\n", 1)
            self._sse(exchange, block, passed_s)

    def _sse(self, exchange: Exchange, block: bytes, passed_s: float) -> None:
        data = b"".join(
            line[5:].lstrip() for line in block.split(b"\n") if line.startswith(b"data:")
        )
        kind = event_type(data)
        if kind == FIRST_OUTPUT and exchange.first_output_at_s is None:
            exchange.first_output_at_s = passed_s
        elif wanted(kind) and (event := parse(data)) is not None:
            exchange.read_event(event, passed_s)
            if event.get("type", "").startswith("response.") and "response" in event:
                self.response = event["response"]

    def finish(self, ended_s: float) -> None:
        """A body that was not a stream: the JSON response (or error) itself."""
        if self.exchange is None or not self._buffer.strip():
            return
        whole = parse(self._buffer)
        if whole is None:
            return
        if "error" in whole and "output" not in whole:
            error = whole["error"] if isinstance(whole["error"], dict) else {}
            self.exchange.error_type = str(error.get("code") or error.get("type") or "error")
            return
        self.exchange.read_response(whole)
        self.response = whole
