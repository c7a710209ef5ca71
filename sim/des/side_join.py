"""A side holding the turn waits for: the parallel classifiers joined on the inference phase,
in as few events as the times allow."""

from __future__ import annotations

import numpy as np

from sim.des.kernel import Environment, Event
from sim.des.pools import ServerPool


def join_side(
    env: Environment,
    pool: ServerPool,
    alongside_s: float,
    side_s: float,
    after_s: float,
    delays: np.ndarray,
    cell: tuple[int, int],
) -> Event:
    """Run ``alongside_s`` while a side holding of ``side_s`` queues for ``pool``, then
    ``after_s`` once both are done; the event returned is processed at the end.  The
    holding's delay beyond its own overrun of ``alongside_s`` goes to ``delays[cell]``.

    Only the holding's end is an event, in general: when it ends before ``alongside_s``
    has passed it starts the rest, ``after_s`` from the join, at once (the timeout lands
    on the very time of the join's end as computed from the join: with the join's start
    at least half that time, the difference is exact).  The event returned is never
    scheduled: its callbacks move to the timeout that ends the join.  A join that starts
    earlier resumes at the join, an event, as two timeouts in a row would.
    """
    join = _SideJoin(env, alongside_s, side_s, after_s, delays, cell)
    pool.hold_aside(side_s, join.side_done)
    if join.pending == 2:
        env.timeout(alongside_s).callbacks.append(join.joined)  # type: ignore[union-attr]
    return join.done


class _SideJoin:
    """What ``join_side`` keeps while it runs (one object, not a closure per callback)."""

    __slots__ = (
        "after_s",
        "cell",
        "delays",
        "done",
        "ends_at_s",
        "env",
        "joins_at_s",
        "overrun_s",
        "pending",
    )

    def __init__(
        self,
        env: Environment,
        alongside_s: float,
        side_s: float,
        after_s: float,
        delays: np.ndarray,
        cell: tuple[int, int],
    ) -> None:
        self.env, self.after_s, self.delays, self.cell = env, after_s, delays, cell
        self.done = env.event()
        started_s = env.now
        self.joins_at_s = started_s + alongside_s
        self.ends_at_s = self.joins_at_s + after_s  # the end when the holding ends first
        self.overrun_s = max(0.0, side_s - alongside_s)
        self.pending = 1 if 2.0 * started_s >= self.ends_at_s else 2
        """The join's end (when it is an event) and the holding's end, still to come."""

    def side_done(self) -> None:
        now_s = self.env.now
        self.delays[self.cell] = max(0.0, now_s - self.joins_at_s - self.overrun_s)
        self.pending -= 1
        if self.pending == 0:
            self._finish(self.ends_at_s - now_s if now_s < self.joins_at_s else self.after_s)

    def joined(self, _event: Event) -> None:
        self.pending -= 1
        if self.pending == 0:
            self._finish(self.after_s)

    def _finish(self, delay_s: float) -> None:
        done = self.done
        self.env.timeout(delay_s).callbacks.extend(done.callbacks)  # type: ignore[union-attr,arg-type]
        done.callbacks = None
