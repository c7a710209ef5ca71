"""Whether one replica still holds a session's history: LRU by stack distance, ttl-pin as a
loss system.

The history a session wrote to a replica (``sim.des.replica_prefixes``) is
found at its next visit unless it expired or was evicted in between:

- **lru**: an idle entry gives way only to entries used after it, so it
  survives a window of W seconds when its size plus the sizes of every entry
  touched on the replica in that window (other sessions' takes and writes,
  those in use, the last writes of sessions that ended) fit the capacity: its
  stack distance (the renewal form of LRU's analysis, with the sizes of the
  entries and the few sessions a replica serves kept as they are, not averaged
  as Che's approximation does).  The other live sessions are independent; one
  touches the replica in the window unless it stays in a gap that began before
  the window's start (``untouched``).
- **ttl-pin**: nothing is evicted within its time-to-live, and a write that does
  not fit is not kept, so the replica is a loss system whose objects are the
  entries, each held from its write until the session writes there again (or
  its time-to-live, for the last write of a rollout).  Its occupancy is the
  stochastic knapsack's product form, insensitive to holding times, by the
  Kaufman-Roberts recursion over the other sessions' writes as Poisson streams;
  a write is kept when the others leave room for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sim.analytic.agent.token_grid import CELLS, Sizes, TokenGrid


@dataclass(frozen=True)
class Neighbours:
    """What else the replica of a tagged session serves (LRU's view)."""

    others: Callable[[np.ndarray], np.ndarray]
    """The generating function of the number of other live sessions writing to the replica,
    E[z^n] (``generating`` of a table of probabilities, or a closed form)."""
    in_use: Sizes
    """The entry an other session holds in use (probabilities adding up to at most 1: the
    rest found nothing, its entry lost)."""
    written: Sizes
    """The entry an other session writes: its whole history."""
    touches: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    """P(an other session has its entry in use on the replica when LRU last checks in a
    window of this many seconds), and P(it wrote there in the window and is not in use)."""
    ends_per_s: float
    """Last writes of ending sessions landing on the replica, per second."""
    ended: Sizes
    """The history a rollout leaves."""


WINDOWS = np.concatenate([[0.0], np.geomspace(1e-3, 1e5, 161)])
"""Windows (s) at which a replica's stack is tabulated; others are interpolated in log."""


class LruStack:
    """The stack distance of an entry on one replica, tabulated over window lengths."""

    def __init__(self, grid: TokenGrid, neighbours: Neighbours) -> None:
        self.grid = grid
        in_use = grid.masses(neighbours.in_use)
        in_use[0] += max(0.0, 1.0 - float(neighbours.in_use.probability.sum()))
        in_use_t = grid.transform(in_use)[None, :]
        written_t = grid.transform(grid.masses(neighbours.written))[None, :]
        ended_t = grid.transform(grid.masses(neighbours.ended))[None, :]
        using, writing = (p[:, None] for p in neighbours.touches(WINDOWS))
        one = (1.0 - using - writing) + using * in_use_t + writing * written_t
        total = neighbours.others(one)
        if neighbours.ends_per_s > 0:
            total = total * np.exp(neighbours.ends_per_s * WINDOWS[:, None] * (ended_t - 1.0))
        self._cumulative = grid.cumulative(total)
        self._log_windows = np.log(np.maximum(WINDOWS, 1e-300))

    def kept(self, own: Sizes, windows_s: np.ndarray) -> np.ndarray:
        """P(an entry written each of ``windows_s`` ago is still held), shape (windows, size
        atoms of ``own``)."""
        windows = np.atleast_1d(np.asarray(windows_s, dtype=float))
        position = (self.grid.capacity_tokens - own.tokens) / self.grid.step
        inside = np.clip(position, 0.0, CELLS)
        low = np.minimum(np.floor(inside).astype(np.int64), CELLS - 1)
        part = inside - low
        at_nodes = (1.0 - part) * self._cumulative[:, low] + part * self._cumulative[:, low + 1]
        at_nodes = np.where(position < 0, 0.0, at_nodes)
        where = np.clip(np.log(np.maximum(windows, 1e-300)), self._log_windows[1], None)
        index = np.clip(np.searchsorted(self._log_windows, where) - 1, 0, WINDOWS.size - 2)
        share = (where - self._log_windows[index]) / (
            self._log_windows[index + 1] - self._log_windows[index]
        )
        share = np.clip(share, 0.0, 1.0)[:, None]
        return (1.0 - share) * at_nodes[index] + share * at_nodes[index + 1]


def generating(count: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """z -> sum_n P(n) z^n for a table of P(n), n = 0, 1, ... (a Horner sum)."""

    def at(z: np.ndarray) -> np.ndarray:
        total = np.zeros_like(z)
        for probability in count[::-1]:
            total = total * z + probability
        return total

    return at


def pinned_occupancy(grid: TokenGrid, offered: Sizes) -> np.ndarray:
    """P(the pinned entries hold x lattice steps), x = 0 .. CELLS: the Kaufman-Roberts
    recursion x q(x) = sum_b a_b b q(x - b) for ``offered`` erlangs of each entry size."""
    masses = grid.masses(offered)[: CELLS + 1]
    load = masses * np.arange(CELLS + 1)
    occupancy = np.zeros(CELLS + 1)
    occupancy[0] = 1.0
    for x in range(1, CELLS + 1):
        occupancy[x] = load[1 : x + 1] @ occupancy[x - 1 :: -1] / x
        if occupancy[x] > 1e150:
            occupancy[: x + 1] /= occupancy[x]
    return occupancy / occupancy.sum()


def pinned_kept(grid: TokenGrid, occupancy: np.ndarray, own: Sizes) -> np.ndarray:
    """P(a write fits beside the pinned entries of ``occupancy``), per size of ``own``."""
    room = (grid.capacity_tokens - own.tokens) / grid.step
    fits = np.interp(np.clip(room, 0, CELLS), np.arange(CELLS + 1), np.cumsum(occupancy))
    return np.where(room < 0, 0.0, fits)
