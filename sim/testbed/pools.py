"""The emulator's contended resources: asyncio semaphores sized like the scenario's pools.

Each pool records its busy level over time, so utilization over any window can
be read afterwards; each acquisition reports how long it waited.  The inference
replicas and their batching slowdown are the simulation's own ``Replicas``.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from models.scenario import Scenario
from models.stages import POOLS, Pool
from sim.des.pools import Replicas

KEPT_CHANGES = 1 << 18
"""Changes of a pool's busy level kept (the older half goes when it fills): utilization is
read over recent windows, and a server that runs for days stays within its memory."""


class TrackedPool:
    """``capacity`` servers behind one FIFO semaphore, with the busy level's history."""

    def __init__(self, name: Pool, capacity: int) -> None:
        self.name, self.capacity = name, capacity
        self._semaphore = asyncio.Semaphore(capacity)
        self._busy = 0
        self._times_s: list[float] = [time.monotonic()]
        self._levels: list[int] = [0]

    def _change(self, delta: int) -> None:
        self._busy += delta
        self._times_s.append(time.monotonic())
        self._levels.append(self._busy)
        if len(self._levels) > KEPT_CHANGES:
            del self._times_s[: KEPT_CHANGES // 2], self._levels[: KEPT_CHANGES // 2]

    @property
    def would_wait(self) -> bool:
        return self._semaphore.locked()

    @asynccontextmanager
    async def hold(self, held_s: dict[str, float] | None = None) -> AsyncIterator[float]:
        """Hold one server; yields the seconds waited for it; adds the seconds held to
        ``held_s[pool]``."""
        arrived_s = time.monotonic()
        await self._semaphore.acquire()
        acquired_s = time.monotonic()
        self._change(+1)
        try:
            yield acquired_s - arrived_s
        finally:
            self._change(-1)
            self._semaphore.release()
            if held_s is not None:
                held_s[self.name.value] = (
                    held_s.get(self.name.value, 0.0) + time.monotonic() - acquired_s
                )

    def utilization(self, start_s: float, end_s: float) -> float:
        """Time-average busy servers over ``capacity`` in [start_s, end_s] (monotonic clock)."""
        times, levels = self._times_s, self._levels
        area = 0.0
        index = max(0, bisect.bisect_right(times, start_s) - 1)
        while index < len(times) and times[index] < end_s:
            begin = max(times[index], start_s)
            end = min(times[index + 1], end_s) if index + 1 < len(times) else end_s
            area += levels[index] * max(0.0, end - begin)
            index += 1
        return area / (self.capacity * (end_s - start_s))

    @property
    def busy(self) -> int:
        return self._busy


class PoolBank:
    """Every pool of the scenario's capacity, and the inference replicas."""

    def __init__(self, scenario: Scenario) -> None:
        c = scenario.capacity
        sizes = {
            Pool.API: c.api_workers,
            Pool.STATE_STORE: c.state_store_slots,
            Pool.SAFETY: c.safety_workers,
            Pool.INFERENCE: c.inference_slots,
        }
        self.pools = {pool: TrackedPool(pool, sizes[pool]) for pool in POOLS}
        self.replicas = Replicas(c.inference_replicas, c.decode_slowdown_per_stream)

    def __getitem__(self, pool: Pool) -> TrackedPool:
        return self.pools[pool]

    def utilization(self, start_s: float, end_s: float) -> dict[str, float]:
        return {pool.value: p.utilization(start_s, end_s) for pool, p in self.pools.items()}
