"""An epoll selector whose timeouts end on time: woken by a timerfd, not by epoll's milliseconds.

``epoll_wait`` takes its timeout in whole milliseconds and asyncio rounds it up,
so a plain sleep ends 0.5-1 ms late on average.  ``select`` takes microseconds
but fails on descriptors above 1,023 (``ValueError: filedescriptor out of range
in select()``), which a server with a thousand clients reaches.  Here epoll
watches the sockets and a timerfd (``timerfd_create``, nanoseconds, the
monotonic clock) armed for each timeout: the wait ends when the timer fires,
with neither limit.  Python 3.11 has no ``os.timerfd_create``, so the two calls
go through ``ctypes``; where they are missing (not Linux) the platform's default
selector is used, on time to the millisecond.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import selectors
import sys

_CLOCK_MONOTONIC = 1
_TFD_NONBLOCK = os.O_NONBLOCK
_TFD_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class _TimerFd:
    """A one-shot monotonic timer as a file descriptor."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        self._settime = libc.timerfd_settime
        self.fd = libc.timerfd_create(_CLOCK_MONOTONIC, _TFD_NONBLOCK | _TFD_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")

    def arm(self, seconds: float) -> None:
        """Fire once after ``seconds`` (0 disarms it)."""
        whole, nanoseconds = divmod(max(0, round(seconds * 1e9)), 1_000_000_000)
        value = _Itimerspec(_Timespec(0, 0), _Timespec(whole, nanoseconds))
        if self._settime(self.fd, 0, ctypes.byref(value), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.read(self.fd, 8)

    def close(self) -> None:
        os.close(self.fd)


class TimerEpollSelector(selectors.EpollSelector):
    """``EpollSelector`` with sub-millisecond timeouts (see the module docstring)."""

    def __init__(self, libc: ctypes.CDLL) -> None:
        super().__init__()
        self._timer = _TimerFd(libc)
        # The epoll object EpollSelector keeps (it offers no public handle on it).
        self._epoll: select.epoll = getattr(self, "_selector")  # noqa: B009
        self._epoll.register(self._timer.fd, select.EPOLLIN)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        armed = False
        if timeout is not None and timeout > 0:
            self._timer.arm(timeout)
            armed = True
        # The timer ends the wait; epoll's own (rounded up) timeout is only a backstop.
        wait_s = -1.0 if timeout is None else max(0.0, timeout) + (0.001 if armed else 0.0)
        keys = self.get_map()
        try:
            events = self._epoll.poll(wait_s, len(keys) + 1)
        except InterruptedError:
            events = []
        ready = []
        for fd, event in events:
            if fd == self._timer.fd:
                self._timer.drain()
                armed = False
                continue
            key = keys.get(fd)
            if key is not None:
                mask = (selectors.EVENT_WRITE if event & ~select.EPOLLIN else 0) | (
                    selectors.EVENT_READ if event & ~select.EPOLLOUT else 0
                )
                ready.append((key, mask & key.events))
        if armed:
            self._timer.arm(0)
            self._timer.drain()
        return ready

    def close(self) -> None:
        self._timer.close()
        super().close()


def precise_selector() -> selectors.BaseSelector:
    """A selector without ``select``'s descriptor limit, on time to the microsecond on Linux."""
    if sys.platform.startswith("linux"):
        try:
            return TimerEpollSelector(ctypes.CDLL(None, use_errno=True))
        except (OSError, AttributeError):
            pass
    return selectors.DefaultSelector()
