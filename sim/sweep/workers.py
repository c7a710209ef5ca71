"""Where fleet replications run: local worker processes, or an existing Dask cluster.

The ``load`` and ``capacity`` commands hand the executor to the analysis layer,
which only sees a ``concurrent.futures.Executor``.  Local processes start in
milliseconds (fork) and need no Dask; ``--scheduler`` sends the replications to a
running Dask scheduler through its ``concurrent.futures`` interface instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from models.errors import ScenarioError


@dataclass(frozen=True)
class Workers:
    """An executor for replications (None: run them here) and how many run at once."""

    executor: Executor | None
    parallel: int
    where: str


def default_workers() -> int:
    """One worker per core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _ready(_task: int) -> int:
    return os.getpid()


@contextmanager
def replication_workers(workers: int | None, scheduler: str | None) -> Iterator[Workers]:
    """Local processes (``workers``, default one per core; 1 runs here) or a Dask scheduler."""
    if workers is not None and scheduler is not None:
        raise ScenarioError("--workers and --scheduler: give one of them, not both")
    if workers is not None and workers < 1:
        raise ScenarioError(f"--workers = {workers}: must be an integer >= 1")
    if scheduler is not None:
        try:
            from dask.distributed import Client
        except ImportError:
            raise ScenarioError(
                "--scheduler: needs Dask, which is not installed; pip install 'loopbudget[sweep]'"
            ) from None
        with Client(scheduler) as client:
            threads = sum(client.nthreads().values())
            yield Workers(client.get_executor(pure=False), max(threads, 1), scheduler)
        return
    count = workers or default_workers()
    if count == 1:
        yield Workers(None, 1, "this process")
        return
    with ProcessPoolExecutor(count) as pool:
        # Start every worker now, before the caller starts threads of its own.
        list(pool.map(_ready, range(count)))
        yield Workers(pool, count, f"{count} local processes")
