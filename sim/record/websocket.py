"""One WebSocket relayed by the proxy: frames both ways, and the responses in flight.

Each ``response.create`` the client sends is an exchange, queued on its lane
(``stream_id``, FIFO as the service runs them); the upstream's events go to the
oldest response in flight on their lane: its first output item, then the event
that ends it (``response.completed``, ``.incomplete``, ``.failed`` or ``error``).
The service's ``responsesapi.websocket_timing`` event, after a response, is kept
on the response it names.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

from starlette.types import Receive, Send
from websockets.exceptions import ConnectionClosed

from sim.record.exchange import FIRST_OUTPUT, TIMING, Exchange, event_type, parse, wanted

if TYPE_CHECKING:
    from sim.record.proxy import Recorder


class RelayedSocket:
    """One relayed WebSocket: its frames both ways and the responses in flight per lane."""

    def __init__(self, recorder: Recorder, connection_id: str, upstream: Any, send: Send) -> None:
        self.recorder, self.connection_id = recorder, connection_id
        self.upstream, self.send = upstream, send
        self.lanes: dict[str | None, deque[Exchange]] = {}
        self.by_response: dict[str, Exchange] = {}
        self.requests = 0

    async def client_to_upstream(self, receive: Receive, recorded: bool) -> None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                await self.upstream.close(message.get("code", 1000))
                return
            taken_s = time.monotonic()
            data = message.get("text")
            if data is None:
                data = message.get("bytes") or b""
            await self.upstream.send(data)
            sent_s = time.monotonic()
            if recorded:
                self._created(data, taken_s, sent_s - taken_s)

    def _created(self, data: str | bytes, taken_s: float, up_s: float) -> None:
        event = parse(data)
        if event is None or event.get("type") != "response.create":
            return
        recorder = self.recorder
        exchange = Exchange(
            "ws", self.connection_id, self.requests > 0, taken_s, recorder.server_address
        )
        exchange.added_s = up_s
        exchange.lane = event.get("stream_id") if isinstance(event.get("stream_id"), str) else None
        self.requests += 1
        body = event.get("response")
        if not isinstance(body, dict):
            body = event
        exchange.read_request(body)
        if recorder.keep is not None:
            recorder.keep("request", body)
        recorder.chains.place(exchange)
        self.lanes.setdefault(exchange.lane, deque()).append(exchange)

    async def upstream_to_client(self) -> None:
        try:
            async for message in self.upstream:
                got_s = time.monotonic()
                key = "text" if isinstance(message, str) else "bytes"
                await self.send({"type": "websocket.send", key: message})
                passed_s = time.monotonic()
                self._event(message, got_s, passed_s)
        except ConnectionClosed:
            pass
        code = self.upstream.close_code or 1000
        await self.send({"type": "websocket.close", "code": code})

    def _event(self, message: str | bytes, got_s: float, passed_s: float) -> None:
        data = message.encode() if isinstance(message, str) else message
        kind = event_type(data)
        if kind == FIRST_OUTPUT:
            head = self._head(None if b'"stream_id"' not in data else parse(data))
            if head is not None and head.first_output_at_s is None:
                head.first_output_at_s = passed_s
            return
        if not wanted(kind):
            return
        event = parse(data)
        if event is None:
            return
        if event.get("type") == TIMING:
            owner = self.by_response.get(str(event.get("response_id")))
            if owner is not None:
                owner.read_timing(event)
            return
        head = self._head(event)
        if head is None or not head.read_event(event, passed_s):
            return
        self.lanes[head.lane].popleft()
        head.added_s += passed_s - got_s
        recorder = self.recorder
        recorder.added_s.append(head.added_s)
        if head.response_id is not None:
            self.by_response[head.response_id] = head
        recorder.chains.ended(head)
        if recorder.keep is not None and event.get("response") is not None:
            recorder.keep("response", event["response"])

    def _head(self, event: dict[str, Any] | None) -> Exchange | None:
        """The oldest response in flight on the event's lane."""
        lane = event.get("stream_id") if event is not None else None
        queue = self.lanes.get(lane if isinstance(lane, str) else None)
        return queue[0] if queue else None
