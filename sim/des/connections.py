"""Connection state seen by one agent: is the next request cold (new connection)?"""

from __future__ import annotations

import math

import numpy as np

from models.scenario import Scenario
from sim.turn.transports import Transport


class KeepAlive:
    """An HTTP/1.1 keep-alive connection, closed after ``idle_s`` without a request."""

    def __init__(self, idle_s: float) -> None:
        self._idle_s = idle_s
        self._released_at: float | None = None

    def is_cold(self, now_s: float) -> bool:
        """True if the request starting now must open a new connection."""
        return self._released_at is None or now_s - self._released_at > self._idle_s

    def release(self, now_s: float) -> None:
        self._released_at = now_s


class WebSocketConnection:
    """A WebSocket that lives at most ``lifetime_s`` and drops as a Poisson process."""

    def __init__(self, lifetime_s: float, drops_per_hour: float, rng: np.random.Generator) -> None:
        self._lifetime_s = lifetime_s
        self._mean_time_to_drop_s = 3600.0 / drops_per_hour if drops_per_hour > 0 else math.inf
        self._rng = rng
        self._ends_at: float | None = None

    def is_cold(self, now_s: float) -> bool:
        """True (and reopen) if no live connection exists at ``now_s``: its cache is gone."""
        if self._ends_at is not None and now_s < self._ends_at:
            return False
        drop_after_s = (
            self._rng.exponential(self._mean_time_to_drop_s)
            if math.isfinite(self._mean_time_to_drop_s)
            else math.inf
        )
        self._ends_at = now_s + min(self._lifetime_s, drop_after_s)
        return True

    def release(self, now_s: float) -> None:
        """A WebSocket stays open between requests."""


Connection = KeepAlive | WebSocketConnection


def new_connection(
    scenario: Scenario, transport: Transport, rng: np.random.Generator
) -> Connection:
    """A fresh connection for one rollout."""
    if transport.is_websocket:
        c = scenario.connection
        return WebSocketConnection(c.ws_lifetime_s, c.ws_drops_per_hour, rng)
    return KeepAlive(scenario.client.keepalive_idle_s)
