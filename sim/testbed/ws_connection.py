"""WebSocket mode on one connection: frames in, events out, a cache that dies with the socket.

Each text frame is one client event; ``response.create`` is queued on its lane
(``stream_id``, or the default lane) and lanes run FIFO without overlap, at most
16 responses active per connection.  Bad frames (invalid JSON, an unknown event
type, a frame over the size limit) get an ``error`` event and the connection
stays usable.  A continuation that fails evicts its parent from the cache.  The
connection lives at most ``connection.ws_lifetime_s`` and drops as a Poisson
process at ``connection.ws_drops_per_hour``; either closes the socket at the
next moment no response is in flight.  After each ``response.completed`` comes the
service's ``responsesapi.websocket_timing`` event (``timing``).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

import numpy as np
from starlette.websockets import WebSocket, WebSocketDisconnect

from sim.testbed.emulator import Emulator
from sim.testbed.protocol import ApiError, Event
from sim.testbed.state import ConnectionCache
from sim.testbed.timing import websocket_timing

ACTIVE_RESPONSES = 16
"""Responses a connection runs at once; further creates queue."""
NAMED_LANES = 32
"""Distinct named lanes (``stream_id``) a connection accepts."""
CLOSE_LIFETIME = 1001
CLOSE_DROPPED = 1012


class Socket:
    """One accepted WebSocket: its cache, lanes, lifetime and the responses in flight."""

    def __init__(
        self,
        emulator: Emulator,
        websocket: WebSocket,
        number: int,
        lifetime_s: float,
        max_frame_bytes: int,
    ) -> None:
        self.emulator, self.websocket, self.number = emulator, websocket, number
        self.cache = ConnectionCache()
        self.ends_at_s, self.close_code = time.monotonic() + lifetime_s, CLOSE_LIFETIME
        self.max_frame_bytes = max_frame_bytes
        self._lanes: dict[str | None, asyncio.Queue[tuple[dict[str, Any], float]]] = {}
        self._workers: list[asyncio.Task[None]] = []
        self._active = asyncio.Semaphore(ACTIVE_RESPONSES)
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._outbox: asyncio.Queue[Event] = asyncio.Queue()

    def drop_after(self, rng: np.random.Generator | None, drops_per_hour: float) -> None:
        """Draw this connection's unplanned drop (the simulation's exponential draw)."""
        if rng is None or drops_per_hour <= 0:
            return
        drop_at_s = time.monotonic() + rng.exponential(3600.0 / drops_per_hour)
        if drop_at_s < self.ends_at_s:
            self.ends_at_s, self.close_code = drop_at_s, CLOSE_DROPPED

    async def send(self, event: Event) -> None:
        """Queue an event for the socket's writer: a slow reader never holds up the service
        (the accelerator streams into a buffer; the network drains it)."""
        self._outbox.put_nowait(event)

    async def _write(self) -> None:
        while True:
            event = await self._outbox.get()
            try:
                await self.websocket.send_text(json.dumps(event))
            finally:
                self._outbox.task_done()

    async def serve(self) -> None:
        """Read frames until the client leaves or the connection's time is up."""
        expiry = asyncio.create_task(self._expire())
        writer = asyncio.create_task(self._write())
        try:
            while True:
                message = await self.websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                await self._frame(
                    message.get("text") or message.get("bytes") or "", time.monotonic()
                )
        except WebSocketDisconnect:
            return
        finally:
            for task in (expiry, writer, *self._workers):
                task.cancel()
            await asyncio.gather(expiry, writer, *self._workers, return_exceptions=True)

    async def _frame(self, data: str | bytes, arrived_s: float) -> None:
        size = len(data.encode() if isinstance(data, str) else data)
        if size > self.max_frame_bytes:
            await self.send(
                ApiError(
                    400, "frame_too_large", f"Frame of {size} bytes exceeds {self.max_frame_bytes}."
                ).ws_event()
            )
            return
        try:
            event = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            await self.send(
                ApiError(400, "invalid_json", "The frame is not valid JSON.").ws_event()
            )
            return
        if not isinstance(event, dict) or event.get("type") != "response.create":
            kind = event.get("type") if isinstance(event, dict) else None
            await self.send(
                ApiError(
                    400, "unknown_event_type", f"Unknown event type {kind!r}.", "type"
                ).ws_event()
            )
            return
        lane = event.get("stream_id")
        if lane not in self._lanes:
            if lane is not None and (not isinstance(lane, str) or len(self._lanes) > NAMED_LANES):
                code = (
                    "invalid_stream_id"
                    if not isinstance(lane, str)
                    else "websocket_stream_limit_reached"
                )
                await self.send(
                    ApiError(400, code, f"Lane {lane!r} refused.", "stream_id").ws_event()
                )
                return
            self._lanes[lane] = asyncio.Queue()
            self._workers.append(asyncio.create_task(self._lane(lane, self._lanes[lane])))
        self._pending += 1
        self._idle.clear()
        self._lanes[lane].put_nowait((event, arrived_s))

    async def _lane(
        self, lane: str | None, queue: asyncio.Queue[tuple[dict[str, Any], float]]
    ) -> None:
        async def emit(event: Event) -> None:
            if lane is not None:
                event["stream_id"] = lane
            await self.send(event)

        while True:
            body, arrived_s = await queue.get()
            try:
                await self._respond(body, arrived_s, lane, emit)
            finally:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.set()

    async def _respond(
        self, body: dict[str, Any], arrived_s: float, lane: str | None, emit: Any
    ) -> None:
        emulator = self.emulator
        try:
            prepared = emulator.prepare(body, http=False, cache=self.cache)
        except ApiError as error:
            if isinstance(body.get("previous_response_id"), str):
                self.cache.evict(body["previous_response_id"])
            await emulator.refuse(error, arrived_s, "ws")
            await self.send(error.ws_event(lane))
            return
        async with self._active:
            state = await emulator.run(prepared, emit, arrived_s, "ws", self.cache, self.number)
        await emit(websocket_timing(emulator.log.completed_record(state.response_id)))

    async def _expire(self) -> None:
        """Close the socket when its lifetime (or its drop) is reached and it is idle."""
        if math.isfinite(self.ends_at_s):
            await self.emulator.lead.sleep_until(self.ends_at_s)
            await self._idle.wait()
            await self._outbox.join()
            await self.websocket.close(self.close_code)
