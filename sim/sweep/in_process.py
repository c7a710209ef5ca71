"""Chunks evaluated in this process, in order: an analytic sweep's in groups.

The batched engine has a fixed cost per call (a few milliseconds), paid once
per transport for each chunk evaluated alone.  An analytic sweep's pending
chunks are evaluated in groups instead (``run_analytic_chunks``: one column
form and one engine pass per transport for the group), each chunk's table cut
from the group's results; a point gives the same bits in any batch, so every
part is the one its chunk alone gives.  A group that raises is evaluated again
chunk by chunk, so the parts before the chunk that fails are written as they
would be.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from models.scenario import Scenario
from sim.analysis.run import Engine
from sim.sweep.tasks import Context, Task, run_analytic_chunks, run_chunk_table

EVALUATED_TOGETHER = 10_000
"""Runs of an analytic sweep run in this process whose chunks are evaluated in one column
form and one engine pass per transport (and memory batch), then written one by one: the
engine's fixed cost per call is paid once per group instead of once per chunk."""


def chunks_in_process(
    context: Context, pending: dict[int, list[Task]], known: dict[int, Scenario] | None
) -> Iterator[tuple[int, pa.Table]]:
    """Chunks evaluated here, in order (``known``: points' scenarios already validated); an
    analytic sweep's pending chunks in groups of up to ``EVALUATED_TOGETHER`` runs."""
    if context.engine is not Engine.ANALYTIC:
        for number, tasks in pending.items():
            yield number, run_chunk_table(context, tasks, known)
        return
    for group in _groups(pending):
        try:
            tables = run_analytic_chunks(context, [pending[n] for n in group], known)
        except Exception:  # each chunk alone: those before the one that fails are written
            tables = None
        if tables is None:
            for number in group:
                yield number, run_chunk_table(context, pending[number], known)
        else:
            yield from zip(group, tables, strict=True)


def _groups(pending: dict[int, list[Task]]) -> Iterator[list[int]]:
    """The pending chunks' numbers in order, cut into groups of at most
    ``EVALUATED_TOGETHER`` runs (one chunk at least)."""
    group: list[int] = []
    runs = 0
    for number, tasks in pending.items():
        if group and runs + len(tasks) > EVALUATED_TOGETHER:
            yield group
            group, runs = [], 0
        group.append(number)
        runs += len(tasks)
    if group:
        yield group
