"""When a request reached the proxy: stamped as its first bytes are parsed.

uvicorn starts the application's task once a request's headers are parsed, and
the task runs on a later turn of the event loop; a time taken there would move
the start of every recorded request, and so the end of every tool gap, by that
scheduling delay.  The parser's first callback is the earliest point at which
the bytes are known to start a request.
"""

from __future__ import annotations

import time

from starlette.types import Scope
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

ARRIVED_AT = "loopbudget.arrived_at_s"
"""The key in a request's ASGI ``state`` holding its arrival (monotonic seconds)."""


class ArrivalStampedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol that stamps each request's arrival into its state."""

    def on_message_begin(self) -> None:
        arrived_s = time.monotonic()
        super().on_message_begin()
        self.scope["state"][ARRIVED_AT] = arrived_s


def arrived_at_s(scope: Scope) -> float:
    """The request's arrival, or now where the server did not stamp it."""
    return float(scope.get("state", {}).get(ARRIVED_AT, time.monotonic()))
