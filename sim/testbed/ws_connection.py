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
from sim.testbed.protocol import SERVER_ERROR, ApiError, Event, log_failure, shown
from sim.testbed.request_check import parse_body
from sim.testbed.state import ConnectionCache
from sim.testbed.timing import websocket_timing

ACTIVE_RESPONSES = 16
"""Responses a connection runs at once; further creates queue."""
NAMED_LANES = 32
"""Distinct named lanes (``stream_id``) a connection accepts."""
CLOSE_LIFETIME = 1001
CLOSE_DROPPED = 1012
CLOSE_NOT_READING = 1008
OUTBOX_EVENTS = 16_384
"""Events a connection may have waiting for its client to read them (a few hundred
responses' worth); beyond that the client is not reading, and the connection closes."""


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
        self._closing: asyncio.Task[None] | None = None

    def drop_after(self, rng: np.random.Generator | None, drops_per_hour: float) -> None:
        """Draw this connection's unplanned drop (the simulation's exponential draw)."""
        if rng is None or drops_per_hour <= 0:
            return
        drop_at_s = time.monotonic() + rng.exponential(3600.0 / drops_per_hour)
        if drop_at_s < self.ends_at_s:
            self.ends_at_s, self.close_code = drop_at_s, CLOSE_DROPPED

    async def send(self, event: Event) -> None:
        """Queue an event for the socket's writer: a slow reader never holds up the service
        (the accelerator streams into a buffer; the network drains it).  A client that lets
        more than ``OUTBOX_EVENTS`` pile up is not reading: its connection is closed."""
        if self._outbox.qsize() >= OUTBOX_EVENTS:
            if self._closing is None:
                self._closing = asyncio.create_task(
                    self.websocket.close(CLOSE_NOT_READING, "the client is not reading its events")
                )
            return
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
                await self._read(message.get("text") or message.get("bytes") or "")
        except WebSocketDisconnect:
            return
        finally:
            tasks = (expiry, writer, *self._workers, *filter(None, [self._closing]))
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _read(self, data: str | bytes) -> None:
        """One frame; a failure inside the service answers it with a 500 error event, and
        the connection goes on (it used to drop without a close frame)."""
        try:
            await self._frame(data, time.monotonic())
        except Exception as error:
            log_failure(error)
            await self.send(SERVER_ERROR.ws_event())

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
            event = parse_body(data)
        except ApiError as error:
            await self.send(error.ws_event())
            return
        if event.get("type") != "response.create":
            kind = shown(event.get("type"))
            await self.send(
                ApiError(
                    400, "unknown_event_type", f"Unknown event type {kind!r}.", "type"
                ).ws_event()
            )
            return
        lane = event.get("stream_id")
        if lane is not None and not isinstance(lane, str):
            await self.send(
                ApiError(
                    400, "invalid_stream_id", f"Lane {shown(lane)} refused.", "stream_id"
                ).ws_event()
            )
            return
        if lane not in self._lanes:
            if lane is not None and len(self._lanes) > NAMED_LANES:
                await self.send(
                    ApiError(
                        400,
                        "websocket_stream_limit_reached",
                        f"Lane {shown(lane)!r} refused.",
                        "stream_id",
                    ).ws_event()
                )
                return
            self._lanes[lane] = asyncio.Queue()
            self._workers.append(asyncio.create_task(self._lane(lane, self._lanes[lane])))
        most = self.emulator.limits.ws_queue_length
        if self._pending >= most:
            await self.send(
                ApiError(
                    429,
                    "rate_limit_exceeded",
                    f"This connection has {most} responses waiting or running; "
                    "wait for one to finish before sending another.",
                ).ws_event(lane if isinstance(lane, str) else None)
            )
            return
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
            except Exception as error:  # the request fails; its lane goes on with the next
                log_failure(error)
                await self.send(SERVER_ERROR.ws_event(lane))
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
