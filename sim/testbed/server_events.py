"""What the driver reads from a server besides its responses: errors and the service's timing.

Over HTTP the service's own time is the ``openai-processing-ms`` header; over
WebSocket mode a ``responsesapi.websocket_timing`` event follows each response,
naming it, so the event of a turn arrives while the next request is under way and
the last response's arrives after the rollout's end (``ServerTimes.last`` reads it
before the socket closes, from a server that has sent one before).
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.exceptions import ConnectionClosed

from sim.testbed.records import TurnRecord
from sim.testbed.timing import TIMING_EVENT

TIMING_WAIT_S = 1.0
"""How long the end of a WebSocket rollout waits for its last response's timing event."""


class ServerTimes:
    """The WebSocket timing events of one rollout, kept on the turns they name."""

    def __init__(self) -> None:
        self._by_response: dict[str, TurnRecord] = {}
        self._seen = False
        """The server has sent a timing event on this rollout's connection."""

    def answered(self, record: TurnRecord) -> None:
        """A response was read: its timing event, when it comes, belongs to ``record``."""
        if record.response_id is not None:
            self._by_response[record.response_id] = record

    def note(self, event: Any) -> None:
        """Keep a timing event on the turn of the response it names."""
        self._seen = True
        record = self._by_response.get(str(getattr(event, "response_id", "")))
        metrics = getattr(event, "timing_metrics", None)
        if record is not None and isinstance(metrics, dict):
            record.server_timing_ms = {
                k: float(v) for k, v in metrics.items() if isinstance(v, int | float)
            }

    async def last(self, connection: Any, record: TurnRecord) -> None:
        """Read the timing event of the rollout's last response (``record``), which follows
        it, from a server that sends them (one that does not is not waited for)."""
        if connection is None or not self._seen or record.server_timing_ms:
            return
        try:
            async with asyncio.timeout(TIMING_WAIT_S):
                while not record.server_timing_ms:
                    event = await connection.recv()
                    if event.type == TIMING_EVENT:
                        self.note(event)
        except (TimeoutError, ConnectionClosed):
            return


def number(text: str | None) -> float | None:
    """A header's number (None when it is missing or not a number)."""
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


def error_code(event: Any) -> str:
    """The code of an ``error`` or ``response.failed`` event."""
    error = getattr(event, "error", None) or getattr(
        getattr(event, "response", None), "error", None
    )
    return str(getattr(error, "code", None) or getattr(error, "type", None) or event.type)


def failure(event: Any) -> str:
    """One line saying what failed."""
    error = getattr(event, "error", None) or getattr(
        getattr(event, "response", None), "error", None
    )
    return f"{event.type}: {error_code(event)}: {getattr(error, 'message', '')}"
