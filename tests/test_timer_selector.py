"""The testbed's event loop: no limit of 1,024 descriptors, and sleeps that end on time."""

from __future__ import annotations

import asyncio
import resource
import socket
import statistics
import time

import pytest

from sim.testbed import clock
from sim.testbed.timer_selector import TimerEpollSelector, precise_selector

pytestmark = pytest.mark.live
SOCKETS = 1_100


def test_the_loop_serves_descriptors_above_1024() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 2 * SOCKETS + 64:
        pytest.skip(f"the hard limit on open files ({hard}) is below {2 * SOCKETS + 64}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2 * SOCKETS + 64), hard))
    pairs = [socket.socketpair() for _ in range(SOCKETS)]
    try:
        assert max(b.fileno() for _, b in pairs) > 1024

        async def echo_last() -> bytes:
            loop = asyncio.get_running_loop()
            a, b = pairs[-1]
            b.setblocking(False)
            a.send(b"ping")
            return await asyncio.wait_for(loop.sock_recv(b, 4), timeout=5)

        assert clock.run(echo_last) == b"ping"
    finally:
        for a, b in pairs:
            a.close()
            b.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_sleeps_end_well_within_a_millisecond() -> None:
    assert isinstance(precise_selector(), TimerEpollSelector)

    async def lateness_s() -> list[float]:
        late = []
        for index in range(200):
            asked_s = 0.0003 + (index % 7) * 0.0007
            start_s = time.monotonic()
            await asyncio.sleep(asked_s)
            late.append(time.monotonic() - start_s - asked_s)
        return late

    late = clock.run(lateness_s)
    # epoll's own timeout rounds up to whole milliseconds: a median near 0.7 ms late
    assert statistics.median(late) < 0.0005
    assert min(late) >= 0
