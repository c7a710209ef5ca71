"""The event queue the engine runs on: SimPy's semantics for what the engine uses, lean.

The engine needs timeouts, events that are triggered once, generator processes
and a run until an event.  SimPy (``simpy.Environment``) gives all of that and
more (failures, interrupts, conditions, resources), and pays for the generality
on every event: a method call to schedule, another to step, a new bound method
for every wait.  This queue keeps SimPy's order exactly: an event scheduled at
``now + delay`` is keyed ``(time, priority, sequence number)``, a process starts
with an urgent event, a triggered event is scheduled at once and a finished
process triggers itself, so every event is processed at the same time and in
the same order as under SimPy.  ``tests/test_kernel.py`` runs fleets and one
agent on both and compares every record bit for bit.

What it leaves out: failing an event (nothing in the engine fails one; an
exception inside a process propagates out of ``run``), interrupts and
conditions.  ``run(until=event)`` returns when that event is processed.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from heapq import heappop, heappush
from itertools import count
from typing import Any

URGENT = 0
"""A process's start is processed before anything else scheduled at the same time."""
NORMAL = 1

_PENDING = object()
_new = object.__new__


class Event:
    """An event that is triggered once; its callbacks run when it is processed
    (``callbacks`` is None after that)."""

    __slots__ = ("_value", "callbacks", "env")

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.callbacks: list[Callable[[Event], object]] | None = []
        self._value: Any = _PENDING

    @property
    def triggered(self) -> bool:
        return self._value is not _PENDING

    @property
    def value(self) -> Any:
        return self._value

    def succeed(self, value: Any = None) -> Event:
        """Trigger the event now (its callbacks run when the queue reaches it)."""
        if self._value is not _PENDING:
            raise RuntimeError(f"{self!r} has already been triggered")
        self._value = value
        env = self.env
        heappush(env._queue, (env.now, NORMAL, next(env._sequence), self))
        return self


class Timeout(Event):
    """An event processed ``delay`` seconds from now (made by ``Environment.timeout``)."""

    __slots__ = ()


class Process(Event):
    """A generator that yields events and resumes when each is processed; as an event, it
    is triggered when the generator returns."""

    __slots__ = ("_resume", "_send")

    def __init__(self, env: Environment, generator: Generator[Event, Any, Any]) -> None:
        self.env = env
        self.callbacks = []
        self._value = _PENDING
        self._send = generator.send
        self._resume = self._step
        start = Event(env)
        start.callbacks = [self._resume]
        start._value = None
        heappush(env._queue, (env.now, URGENT, next(env._sequence), start))

    def _step(self, event: Event) -> None:
        send = self._send
        try:
            event = send(event._value)
            while event.callbacks is None:  # already processed: no wait
                event = send(event._value)
        except StopIteration as stop:
            self._value = stop.value
            env = self.env
            heappush(env._queue, (env.now, NORMAL, next(env._sequence), self))
            return
        event.callbacks.append(self._resume)


class _Stop(Exception):
    pass


def _stop(event: Event) -> None:
    raise _Stop(event._value)


class Environment:
    """Simulated time (``now``, seconds) and the queue of scheduled events."""

    __slots__ = ("_queue", "_sequence", "now")

    def __init__(self) -> None:
        self.now: float = 0
        self._queue: list[tuple[float, int, int, Event]] = []
        self._sequence = count()

    def timeout(self, delay: float, value: Any = None) -> Timeout:
        # Built here rather than by a constructor: one call less on the engine's commonest
        # events (``event`` likewise).
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        timeout = _new(Timeout)
        timeout.env = self
        timeout.callbacks = []
        timeout._value = value
        heappush(self._queue, (self.now + delay, NORMAL, next(self._sequence), timeout))
        return timeout

    def event(self) -> Event:
        event = _new(Event)
        event.env = self
        event.callbacks = []
        event._value = _PENDING
        return event

    def process(self, generator: Generator[Event, Any, Any]) -> Process:
        return Process(self, generator)

    def run(self, until: Event | None = None) -> Any:
        """Process events until ``until`` is processed (None: until none is left)."""
        if until is not None:
            if until.callbacks is None:
                return until._value
            until.callbacks.append(_stop)
        queue = self._queue
        try:
            while queue:
                self.now, _, _, event = heappop(queue)
                callbacks, event.callbacks = event.callbacks, None
                for callback in callbacks:  # type: ignore[union-attr]
                    callback(event)
        except _Stop as stop:
            return stop.args[0]
        if until is not None:
            raise RuntimeError(f"no events left before {until!r} was triggered")
        return None
