"""Connections over a client's limit, refused at the door with the service's 429.

uvicorn's HTTP/1.1 protocol counts the open connections; beyond the limit
(``sim.testbed.limits.connection_limit``) a new connection's first request is
answered ``429`` with the Responses API's error body and the connection closed.
A refused connection that sends nothing is closed after ``REFUSED_GRACE_S``, so
idle sockets never hold the server's descriptors beyond the limit for long.
"""

from __future__ import annotations

import json
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from sim.testbed.protocol import ApiError

REFUSED_GRACE_S = 5.0
"""How long a refused connection may take to send the request its 429 answers."""


def error_response(error: ApiError) -> bytes:
    """A whole HTTP/1.1 response carrying ``error``, closing the connection."""
    body = json.dumps(error.http_json()).encode()
    head = (
        f"HTTP/1.1 {error.status} {_PHRASES.get(error.status, 'Error')}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


_PHRASES = {400: "Bad Request", 413: "Content Too Large", 429: "Too Many Requests"}


def limited_protocol(most: int) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol, refusing a client's connections beyond ``most`` open:
    the first request on such a connection is answered 429 and the connection closed (one
    that sends nothing is closed after ``REFUSED_GRACE_S``)."""

    class LimitedProtocol(H11Protocol):
        refused = False

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > most and self._from_client() > most:
                self.refused = True
                self.loop.call_later(REFUSED_GRACE_S, transport.close)

        def _from_client(self) -> int:
            peer = self.client[0] if self.client else None
            return sum(
                1 for c in self.connections if (getattr(c, "client", None) or [None])[0] == peer
            )

        def data_received(self, data: bytes) -> None:
            if not self.refused:
                super().data_received(data)
                return
            error = ApiError(
                429,
                "too_many_connections",
                f"This client has more than {most:,} open connections; close some first.",
            )
            self.transport.write(error_response(error))
            self.transport.close()

    return LimitedProtocol
