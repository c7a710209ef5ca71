"""Contended resources with the statistics a queueing person trusts.

A ``ServerPool`` is ``capacity`` identical servers with one FIFO queue.  Taking
a free server and giving one back cost no event, and neither does a grant: the
waiter says what it does when handed a server (``wait``), and ``release`` does it
in that call (``queue_for``, side holdings: start the holding's time).  Time-weighted
levels (busy servers, waiting requests) are integrated over the measured window
only, so the warm-up is cut; waits are returned to the caller, who records them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from models.stages import Pool
from sim.des.kernel import Environment, Event


class TimeWeighted:
    """The time integral of a level over the window [start_s, end_s].

    With the level's changes d_i at times t_i (clipped to the window), the integral
    up to a time t in the window is ``level(t) t - sum(d_i t_i)``: a change costs one
    clip and one multiply-add.
    """

    __slots__ = ("_env", "end_s", "level", "offset", "start_s")

    def __init__(self, env: Environment, start_s: float, end_s: float) -> None:
        self._env = env
        self.start_s = start_s
        self.end_s = end_s
        self.level = 0
        self.offset = 0.0
        """The sum of d_i t_i (``ServerPool`` changes its busy level inline)."""

    def change(self, delta: int) -> None:
        now_s = self._env.now
        at_s = (
            self.start_s if now_s < self.start_s else (now_s if now_s <= self.end_s else self.end_s)
        )
        self.offset += delta * at_s
        self.level += delta

    def area(self) -> float:
        """The integral of the level from the window's start up to now (or its end)."""
        now_s = min(max(self._env.now, self.start_s), self.end_s)
        return self.level * now_s - self.offset

    def mean(self) -> float:
        """Time-average of the level over the window (call after the run)."""
        return self.area() / (self.end_s - self.start_s)


class ServerPool:
    """``capacity`` identical servers with one FIFO queue.

    ``take`` gives a free server at once (no event); ``wait`` queues for one;
    ``release`` hands the server straight to the first in the queue, so the
    pool never has a free server while someone waits.
    """

    def __init__(
        self,
        env: Environment,
        name: Pool,
        capacity: int,
        start_s: float,
        end_s: float,
        counted_in: ServerPool | None = None,
    ) -> None:
        self.name = name
        self.capacity = capacity
        self.free = capacity
        self._env = env
        self._queue: deque[Callable[[], object]] = deque()
        """Who waits, in order: what each does when it is handed a server."""
        self._give_back = self._release_held
        """Bound once: the callback that ends a holding."""
        # A part of a larger pool (one replica's slots) counts its levels in the whole's.
        self.busy: TimeWeighted = (
            counted_in.busy if counted_in else TimeWeighted(env, start_s, end_s)
        )
        self.waiting: TimeWeighted = (
            counted_in.waiting if counted_in else TimeWeighted(env, start_s, end_s)
        )

    @property
    def load(self) -> int:
        """Requests in service or waiting (what a least-loaded router compares)."""
        return self.capacity - self.free + len(self._queue)

    def take(self) -> bool:
        """Take a free server if there is one (the caller then holds it until ``release``)."""
        if self.free:
            self.free -= 1
            # ``busy.change(+1)`` inline, as in ``release``: the commonest changes of all.
            busy, now_s = self.busy, self._env.now
            busy.offset += (
                busy.start_s
                if now_s < busy.start_s
                else (now_s if now_s <= busy.end_s else busy.end_s)
            )
            busy.level += 1
            return True
        return False

    def wait(self, start: Callable[[], object]) -> None:
        """Queue for a server (after ``take`` failed): ``release`` hands it over by calling
        ``start()``, in that call."""
        self._queue.append(start)
        self.waiting.change(+1)

    def queue_for(self, service_s: float) -> Event:
        """Queue for a server (after ``take`` failed) to hold it ``service_s``: the event is
        processed when they have passed, its value the time the server was granted.

        The holder does nothing between the grant and the end but wait, so the grant is no
        event of its own: ``release`` starts the holding's timeout and the holder's wait
        moves onto it (the same times; only the place among events at exactly the same
        end, scheduled at the very instant of the grant, could differ).
        """
        env = self._env
        waiting = env.event()  # never scheduled: its callbacks move to the holding's end

        def start() -> None:
            held = env.timeout(service_s, env.now)
            held.callbacks.extend(waiting.callbacks)  # type: ignore[union-attr,arg-type]
            waiting.callbacks = None

        self.wait(start)
        return waiting

    def hold(self, service_s: float) -> Event:
        """Hold a server ``service_s`` (the caller then ``release``s it): a timeout when one
        is free, else ``queue_for``.  The event's value is the time the server was granted
        when it queued, None when it did not."""
        if self.take():
            return self._env.timeout(service_s)
        return self.queue_for(service_s)

    def release(self) -> None:
        if self._queue:
            self.waiting.change(-1)
            self._queue.popleft()()
        else:
            self.free += 1
            busy, now_s = self.busy, self._env.now
            busy.offset -= (
                busy.start_s
                if now_s < busy.start_s
                else (now_s if now_s <= busy.end_s else busy.end_s)
            )
            busy.level -= 1

    def hold_aside(self, service_s: float, done: Callable[[], object] | None = None) -> None:
        """Hold a server for ``service_s`` off the caller's path, queueing if none is free
        (callbacks, no process of its own); ``done()`` runs when the server is given back.

        A holding that queued starts when ``release`` hands it the server, in that call:
        nothing waits on it, so no grant event is needed (a request's grant resumes its
        turn, which takes other pools, and stays an event).  Its end is the same time as
        with a grant event; only its place among events at exactly that time, scheduled at
        the very instant of the handover, could differ.
        """
        if done is None and self.take():
            # The commonest holding: nothing to tell, a free server, so no object for it either.
            self._env.timeout(service_s).callbacks.append(self._give_back)  # type: ignore[union-attr]
            return
        holding = _AsideHolding(self, service_s, done)
        if self.take():
            holding.start()
            return
        self.wait(holding.start)

    def _release_held(self, _event: Event) -> None:
        self.release()

    def utilization(self) -> float:
        """Time-average busy servers over capacity, in the measured window."""
        return self.busy.mean() / self.capacity


class _AsideHolding:
    """A side holding that queued or tells ``done`` at its end (``ServerPool.hold_aside``):
    an object, not closures, so it makes no reference cycle (compiled, closures that call
    each other would, and the cyclic garbage collector would have them to find)."""

    __slots__ = ("done", "pool", "service_s")

    def __init__(
        self, pool: ServerPool, service_s: float, done: Callable[[], object] | None
    ) -> None:
        self.pool, self.service_s, self.done = pool, service_s, done

    def start(self) -> None:
        # A new event's callbacks are a list (None only once it has been processed).
        self.pool._env.timeout(self.service_s).callbacks.append(self.finish)  # type: ignore[union-attr]

    def finish(self, _event: Event) -> None:
        self.pool.release()
        if self.done is not None:
            self.done()


class Replicas:
    """Inference replicas: a request streams on the least-loaded one (or the one its routing
    chose), whose decode rate per stream falls with its batch (``1 + slowdown x (streams -
    1)``)."""

    def __init__(self, count: int, slowdown_per_stream: float) -> None:
        self.streams = [0] * count
        """Streams in flight on each replica."""
        self._slowdown = slowdown_per_stream

    def join(self) -> tuple[int, float]:
        """Start a stream on the least-loaded replica; returns it and its decode slowdown."""
        streams = self.streams
        replica = streams.index(min(streams))
        return replica, self.join_at(replica)

    def join_at(self, replica: int) -> float:
        """Start a stream on ``replica`` (routed there); returns its decode slowdown factor."""
        self.streams[replica] += 1
        return 1.0 + self._slowdown * (self.streams[replica] - 1)

    def leave(self, replica: int) -> None:
        self.streams[replica] -= 1
