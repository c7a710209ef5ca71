"""Where fleet replications run: local worker processes, or an existing Dask cluster.

The ``load`` and ``capacity`` commands hand the executor to the analysis layer,
which only sees a ``concurrent.futures.Executor``.  Local processes start in
milliseconds (fork) and need no Dask; ``--scheduler`` sends the replications to a
running Dask scheduler through its ``concurrent.futures`` interface instead.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from models.errors import ScenarioError
from sim.analysis.workers_need import check_workers, fitting_workers
from sim.des import progress
from sim.sweep.cluster import connect

if TYPE_CHECKING:
    from concurrent.futures import Executor


@dataclass(frozen=True)
class Workers:
    """An executor for replications (None: run them here) and how many run at once."""

    executor: Executor | None
    parallel: int
    where: str


def _ready(_task: int) -> int:
    return os.getpid()


@contextmanager
def replication_workers(
    workers: int | None, scheduler: str | None, share_bytes: float = 0.0
) -> Iterator[Workers]:
    """Local processes (``workers``; 1 runs here) or a Dask scheduler.

    Local processes are estimated first, each with ``share_bytes`` of work
    (``sim.analysis.workers_need.worker_share``): a count asked for is refused over the
    memory cap; the default is one per core, as many as fit within it."""
    if workers is not None and scheduler is not None:
        raise ScenarioError("--workers and --scheduler: give one of them, not both")
    if workers is not None and workers < 1:
        raise ScenarioError(f"--workers = {workers}: must be an integer >= 1")
    if scheduler is not None:
        if importlib.util.find_spec("distributed") is None:
            raise ScenarioError(
                "--scheduler: needs Dask, which is not installed; pip install 'loopbudget[sweep]'"
            )
        with connect(scheduler) as client:
            threads = sum(client.nthreads().values())
            yield Workers(client.get_executor(pure=False), max(threads, 1), scheduler)
        return
    if workers is None:
        count = fitting_workers(share_bytes)
    else:
        count = workers
        check_workers("--workers", count, share_bytes)
    if count == 1:
        yield Workers(None, 1, "this process")
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # only where processes start

    # Replications in the workers report their progress on a queue; a thread here hands
    # each report to this process's sink (a bar), so the bar moves while they run.
    reports: multiprocessing.SimpleQueue[tuple[str, float] | None] = multiprocessing.SimpleQueue()
    with ProcessPoolExecutor(count, initializer=_start_worker, initargs=(reports,)) as pool:
        relay = threading.Thread(target=_relay, args=(reports,), daemon=True)
        relay.start()
        try:
            # Start every worker now, before the caller starts threads of its own.
            list(pool.map(_ready, range(count)))
            yield Workers(pool, count, f"{count} local processes")
        finally:
            reports.put(None)
            relay.join()


def _start_worker(reports: Any) -> None:
    """A worker's progress goes to the queue its parent reads, and its BLAS runs on one
    thread: the workers are one per core already, and a BLAS thread per core in each
    (woken by a block's matrix product, then spinning) takes the other workers' cores."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    progress.sink = lambda job, fraction: reports.put((job, fraction))


def _relay(reports: Any) -> None:
    while (report := reports.get()) is not None:
        progress.report(*report)
