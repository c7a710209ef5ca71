"""Sleeping until a deadline on an event loop with sub-millisecond timers.

``epoll_wait`` takes its timeout in whole milliseconds, and asyncio rounds it up,
so a plain ``asyncio.sleep`` on Linux ends 0.5-1 ms late on average.
``select`` takes microseconds: the testbed's loops use a ``SelectSelector``
(at most about a thousand sockets, plenty for a few hundred agents), whose
sleeps end about 0.1-0.2 ms late, more on a loaded machine.  What is left is
measured when a loop starts and then after every sleep (``TimerLead``): each
sleep aims early by the running mean of how late the sleeps end, so the mean
error of a sleep stays about zero while the load changes; stage delays are
chained on absolute deadlines, so the error of one sleep does not add to the next.
"""

from __future__ import annotations

import asyncio
import selectors
import statistics
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_PROBES = 40
_PROBE_S = 0.002
_KEPT_LATENESS = 20_000
_ADAPTATION = 0.05
"""Weight of one sleep's lateness in the lead (a running mean over about 20 sleeps)."""
_MAX_LEAD_S = 0.005


def run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine on a new event loop with microsecond timers."""
    with asyncio.Runner(
        loop_factory=lambda: asyncio.SelectorEventLoop(selectors.SelectSelector())
    ) as runner:
        return runner.run(main())


class TimerLead:
    """How late this loop's timers fire, to aim that much early: the median of a few probes
    to start with, then a running mean of every sleep's lateness.  It also keeps how late
    its sleeps ended (the noise floor of a run)."""

    def __init__(self, lead_s: float = 0.0) -> None:
        self.lead_s = lead_s
        self._late_s: deque[float] = deque(maxlen=_KEPT_LATENESS)

    def lateness_s(self) -> dict[str, float]:
        """Mean, 99th percentile and largest lateness of the recent sleeps (seconds)."""
        if not self._late_s:
            return {"mean": 0.0, "p99": 0.0, "max": 0.0, "sleeps": 0}
        late = sorted(self._late_s)
        return {
            "mean": statistics.fmean(late),
            "p99": late[int(0.99 * (len(late) - 1))],
            "max": late[-1],
            "sleeps": len(late),
        }

    @classmethod
    async def measure(cls) -> TimerLead:
        late_s = []
        for _ in range(_PROBES):
            start_s = time.monotonic()
            await asyncio.sleep(_PROBE_S)
            late_s.append(time.monotonic() - start_s - _PROBE_S)
        return cls(max(0.0, statistics.median(late_s)))

    async def sleep_until(self, deadline_s: float) -> None:
        """Return at about ``deadline_s`` (monotonic clock); at once if it has passed."""
        remaining_s = deadline_s - time.monotonic() - self.lead_s
        if remaining_s > 0:
            await asyncio.sleep(remaining_s)
            late_s = time.monotonic() - deadline_s
            self._late_s.append(late_s)
            self.lead_s = min(_MAX_LEAD_S, max(0.0, self.lead_s + _ADAPTATION * late_s))

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(time.monotonic() + seconds)
