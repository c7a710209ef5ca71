"""Conversation state the emulator keeps: the persistent store and a connection's cache.

A response's state is the whole conversation after it (input and output items),
with the rollout it belongs to.  ``store=true`` responses go to the persistent
``ResponseStore`` (reloading them costs the state-store stage), kept for a time
to live and within a byte budget (``sim.testbed.limits``); every response on
a WebSocket goes to its connection's ``ConnectionCache`` (an in-memory lookup),
which dies with the connection.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

from sim.testbed.protocol import Item

CACHED_RESPONSES = 16
"""Responses a connection's cache holds (one per active response the service allows)."""


@dataclass(frozen=True)
class ResponseState:
    """The conversation after one response and what the server knows of it."""

    response_id: str
    context: tuple[Item, ...]
    context_tokens: float
    fixed_key: str
    """Identifies the instructions and tool definitions it was rendered with."""
    rollout: int
    replication: int
    store: bool


ITEM_OVERHEAD_BYTES = 512
"""Bytes an item costs the store besides its text (its object and keys), an upper bound."""


class ResponseStore:
    """Persistent storage of ``store=true`` responses (shared by every connection), kept for
    ``ttl_s`` and, oldest first, within ``budget_bytes``.

    A response is charged the text of its whole context (``context_tokens`` at
    ``bytes_per_token``) plus ``ITEM_OVERHEAD_BYTES`` an item: responses of one chain share
    their items, so the charge bounds the memory held from above.
    """

    def __init__(self, bytes_per_token: float, ttl_s: float, budget_bytes: float) -> None:
        self._bytes_per_token, self._ttl_s, self._budget = bytes_per_token, ttl_s, budget_bytes
        self._states: OrderedDict[str, tuple[ResponseState, float, float]] = OrderedDict()
        self.bytes = 0.0

    def get(self, response_id: str) -> ResponseState | None:
        self._expire(time.monotonic())
        kept = self._states.get(response_id)
        return kept[0] if kept is not None else None

    def put(self, state: ResponseState) -> None:
        if not state.store:
            return
        charge = state.context_tokens * self._bytes_per_token
        charge += ITEM_OVERHEAD_BYTES * len(state.context)
        self._states[state.response_id] = (state, time.monotonic(), charge)
        self.bytes += charge
        self._expire(time.monotonic())

    def __len__(self) -> int:
        return len(self._states)

    def _expire(self, now_s: float) -> None:
        """Drop the oldest responses while they are past their time or over the budget."""
        while self._states:
            _, stored_s, charge = next(iter(self._states.values()))
            if now_s - stored_s <= self._ttl_s and self.bytes <= self._budget:
                return
            self._states.popitem(last=False)
            self.bytes -= charge


class ConnectionCache:
    """The connection-scoped cache of recent response state (WebSocket mode)."""

    def __init__(self, capacity: int = CACHED_RESPONSES) -> None:
        self._states: OrderedDict[str, ResponseState] = OrderedDict()
        self._capacity = capacity

    def get(self, response_id: str) -> ResponseState | None:
        return self._states.get(response_id)

    def put(self, state: ResponseState) -> None:
        self._states[state.response_id] = state
        self._states.move_to_end(state.response_id)
        while len(self._states) > self._capacity:
            self._states.popitem(last=False)

    def evict(self, response_id: str) -> None:
        """A failed continuation evicts the parent it referenced."""
        self._states.pop(response_id, None)
