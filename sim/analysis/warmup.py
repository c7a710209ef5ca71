"""Steady state: how much of a run's start to cut, found from the run itself (MSER-5).

MSER (White, 1997; the MSER-5 variant of White, Cobb and Spratt, 2000) batches
the output series in fives and deletes the first ``d`` batch means that
minimize the standard error of the mean of the rest,
``sum((Y_i - mean_d)^2) / (n - d)^2``, over ``d`` in the first half.  A minimum
near that half means the series never settled: the run was too short.

A fleet replication's series is the end-to-end time of its measured rollouts in
start order; the configured ``load.warmup_s`` is always cut, and MSER-5 may cut
more, at one of the window's checkpoints (``sim.des.replication``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.des.replication import Replication

BATCH = 5
TOO_LATE = 0.4
"""A cut beyond this share of the series (the search stops at half) says the run is too
short to reach steady state."""


@dataclass(frozen=True)
class Truncation:
    """Observations to delete from the start of a series, and whether that is trustworthy."""

    deleted: int
    settled: bool
    """False when the best cut lies near the end of the search: no steady state seen."""


def mser5(series: np.ndarray) -> Truncation:
    """MSER-5 truncation of ``series`` (too few batches to judge: no cut, settled)."""
    batches = series.size // BATCH
    if batches < 10:
        return Truncation(0, True)
    means = series[: batches * BATCH].reshape(batches, BATCH).mean(axis=1)
    # Sums over the batches kept after deleting d, for every d, from the end.
    kept = np.arange(batches, 0, -1)
    total = np.cumsum(means[::-1])[::-1]
    squares = np.cumsum((means**2)[::-1])[::-1]
    sum_sq_dev = squares - total**2 / kept
    candidates = batches // 2 + 1
    score = sum_sq_dev[:candidates] / kept[:candidates] ** 2
    best = int(np.argmin(score))
    return Truncation(best * BATCH, best <= TOO_LATE * batches)


@dataclass(frozen=True)
class SteadyState:
    """Replications with their detected warm-up cut."""

    replications: list[Replication]
    cut_s: float
    """The latest cut over the replications, in simulated seconds from the start."""
    settled: bool


def steady_state(replications: list[Replication]) -> SteadyState:
    """Each replication measured from its own MSER-5 cut (at least the configured warm-up)."""
    cut, cuts, settled = [], [], True
    for r in replications:
        order = np.argsort(r.records.started_at_s, kind="stable")
        truncation = mser5(r.records.e2e_s[order])
        settled &= truncation.settled
        start_s = r.window_start_s
        if truncation.deleted > 0:
            start_s = float(r.records.started_at_s[order][truncation.deleted])
        trimmed = r.since(start_s)
        cut.append(trimmed)
        cuts.append(trimmed.window_start_s)
    return SteadyState(cut, max(cuts), settled)
