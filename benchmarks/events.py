"""Count the events a run processes, without slowing the timed runs.

Counting is a separate, untimed pass: while ``counted_events`` is active,
``simpy.Environment`` is replaced by a subclass whose ``step`` (one processed
event) adds to a tally, the monitoring hook SimPy's documentation describes.
The skeletons build their environments as ``simpy.Environment()``; the engine
runs on its own event queue, which processes the same events as SimPy
(``tests/test_kernel.py``), so while counting it runs on the counting subclass
too, and one method counts both.  Where the engine's event loop is compiled
(``sim.des.compiled``), it takes only its own queue, which counts the events it
processes: it runs on that, and the tally adds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from unittest import mock

import simpy

import sim.des
from sim.des import engine, kernel


@dataclass
class EventTally:
    """Events processed and environments created while counting."""

    events: int = 0
    environments: int = 0


@contextmanager
def counted_events() -> Iterator[EventTally]:
    """Tally every event processed by environments created inside the block."""
    tally = EventTally()

    class CountingEnvironment(simpy.Environment):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            tally.environments += 1

        def step(self) -> None:
            super().step()
            tally.events += 1

    queues: list[kernel.Environment] = []

    class CountedQueue(kernel.Environment):
        def __init__(self) -> None:
            super().__init__()
            tally.environments += 1
            queues.append(self)

    own = CountedQueue if sim.des.COMPILED else CountingEnvironment
    with (
        mock.patch.object(simpy, "Environment", CountingEnvironment),
        mock.patch.object(engine, "Environment", own),
    ):
        yield tally
    tally.events += sum(queue.processed for queue in queues)  # type: ignore[attr-defined]
    if tally.environments == 0:
        raise RuntimeError("no simpy.Environment was created while counting events")
