"""The transports by name, as a spec or a sweep gives them, and what each one is.

Kept free of numpy and the scenario model: the command line parses a spec with it
before the engines load (``sim.turn.transports`` gives each one's scope of work).
"""

from __future__ import annotations

from enum import StrEnum


class Transport(StrEnum):
    """How the client talks to the API."""

    HTTP = "http"
    HTTP_FULL = "http-full"
    WS = "ws"
    WS_APPEND = "ws-append"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    @property
    def is_websocket(self) -> bool:
        return self in (Transport.WS, Transport.WS_APPEND)


_DESCRIPTIONS = {
    Transport.HTTP: "per-request HTTP with previous_response_id (server rebuilds state)",
    Transport.HTTP_FULL: "per-request HTTP resending the whole history (no stored state)",
    Transport.WS: "WebSocket mode with the connection-scoped cache",
    Transport.WS_APPEND: "one long-running response per rollout (the minimal-overhead bound)",
}
