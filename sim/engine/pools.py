"""Contended resources with the statistics a queueing person trusts.

A ``ServerPool`` wraps a SimPy resource and keeps time-weighted levels (busy
servers, waiting requests) over the measured window only, so the warm-up is
cut; waits are returned to the caller, who records them per turn.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import simpy

from models.stages import Pool


class TimeWeighted:
    """The time integral of a level over the window [start_s, end_s]."""

    def __init__(self, env: simpy.Environment, start_s: float, end_s: float) -> None:
        self._env = env
        self._start_s = start_s
        self._end_s = end_s
        self._level = 0
        self._changed_at_s = 0.0
        self._area = 0.0

    @property
    def level(self) -> int:
        return self._level

    def change(self, delta: int) -> None:
        now_s = self._env.now
        # Inlined _accumulate: this runs several times per simulated turn.
        begin = self._changed_at_s if self._changed_at_s > self._start_s else self._start_s
        end = now_s if now_s < self._end_s else self._end_s
        if end > begin:
            self._area += self._level * (end - begin)
        self._changed_at_s = now_s
        self._level += delta

    def mean(self) -> float:
        """Time-average of the level over the window (call after the run)."""
        self._accumulate(self._env.now)
        return self._area / (self._end_s - self._start_s)

    def _accumulate(self, now_s: float) -> None:
        begin = max(self._changed_at_s, self._start_s)
        end = min(now_s, self._end_s)
        if end > begin:
            self._area += self._level * (end - begin)
        self._changed_at_s = now_s


class ServerPool:
    """``capacity`` identical servers with one FIFO queue."""

    def __init__(
        self, env: simpy.Environment, name: Pool, capacity: int, start_s: float, end_s: float
    ) -> None:
        self.name = name
        self.capacity = capacity
        self._env = env
        self._resource = simpy.Resource(env, capacity)
        self.busy = TimeWeighted(env, start_s, end_s)
        self.waiting = TimeWeighted(env, start_s, end_s)

    def serve(self, service_s: float) -> Generator[simpy.Event, Any, float]:
        """Hold one server for ``service_s``; returns the time spent waiting for it."""
        arrived_s = self._env.now
        self.waiting.change(+1)
        with self._resource.request() as granted:
            yield granted
            self.waiting.change(-1)
            self.busy.change(+1)
            waited_s = self._env.now - arrived_s
            yield self._env.timeout(service_s)
            self.busy.change(-1)
        return waited_s

    def acquire(self) -> Generator[simpy.Event, Any, tuple[simpy.Resource, float]]:
        """Take one server until ``release``; returns the request and the wait."""
        arrived_s = self._env.now
        self.waiting.change(+1)
        request = self._resource.request()
        yield request
        self.waiting.change(-1)
        self.busy.change(+1)
        return request, self._env.now - arrived_s

    def release(self, request: simpy.Event) -> None:
        self.busy.change(-1)
        self._resource.release(request)

    def utilization(self) -> float:
        """Time-average busy servers over capacity, in the measured window."""
        return self.busy.mean() / self.capacity


class Replicas:
    """Inference replicas: a request streams on the least-loaded one, whose decode rate per
    stream falls with its batch (``1 + slowdown x (streams - 1)``)."""

    def __init__(self, count: int, slowdown_per_stream: float) -> None:
        self._streams = [0] * count
        self._slowdown = slowdown_per_stream

    def join(self) -> tuple[int, float]:
        """Start a stream; returns its replica and its decode slowdown factor."""
        streams = self._streams
        replica = streams.index(min(streams))
        streams[replica] += 1
        return replica, 1.0 + self._slowdown * (streams[replica] - 1)

    def leave(self, replica: int) -> None:
        self._streams[replica] -= 1
