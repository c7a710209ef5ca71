"""Conversation state the emulator keeps: the persistent store and a connection's cache.

A response's state is the whole conversation after it (input and output items),
with the rollout it belongs to.  ``store=true`` responses go to the persistent
``ResponseStore`` (reloading them costs the state-store stage); every response on
a WebSocket goes to its connection's ``ConnectionCache`` (an in-memory lookup),
which dies with the connection.
"""

from __future__ import annotations

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


class ResponseStore:
    """Persistent storage of ``store=true`` responses (shared by every connection)."""

    def __init__(self) -> None:
        self._states: dict[str, ResponseState] = {}

    def get(self, response_id: str) -> ResponseState | None:
        return self._states.get(response_id)

    def put(self, state: ResponseState) -> None:
        if state.store:
            self._states[state.response_id] = state


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
