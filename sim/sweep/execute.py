"""Run a sweep: split it into chunks, evaluate them here or on Dask, write each as it finishes.

``workers = 0`` evaluates the chunks in this process, in order (the default
for an analytic sweep).  Otherwise a ``dask.distributed`` client does: on a
``LocalCluster`` of worker processes bound to 127.0.0.1 (one per core unless
told; the default for a DES sweep), or on an existing scheduler given by its
address.  Finished chunks come back to this process, which writes
them; workers need no shared file system.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as ProgressTask
from rich.text import Text

from models.scenario import Scenario
from sim.analysis.run import Engine
from sim.report.progress import progress_bar
from sim.sweep.cluster import check_address, check_workers, client
from sim.sweep.design import expand
from sim.sweep.fingerprint import Resolved, resolve
from sim.sweep.in_process import chunks_in_process
from sim.sweep.lock import writer_lock
from sim.sweep.manifest import package_version
from sim.sweep.rows import ERROR, POINT, SEED, TRANSPORT, axis_kinds, error_rows, to_table
from sim.sweep.store import ResultsDir, failures, read_results
from sim.sweep.sweepfile import Sweep
from sim.sweep.tasks import Context, Task, run_chunk_table
from sim.sweep.work import WorkTally

KEPT_SCENARIOS = 20_000
"""Points of an analytic sweep run in this process whose scenarios, validated to
fingerprint them, are kept for the run instead of validated again (about 3 kB each
when a point changes one section); a larger sweep validates each point twice."""

Part = tuple[int, pa.Table]
"""A finished chunk: its number and its rows."""


@dataclass(frozen=True)
class Outcome:
    """What a sweep produced, over all its parts (resumed ones included)."""

    rows: int
    runs: int
    failed: int
    first_error: str | None
    resumed: int
    """Runs (point x seed) found finished when the sweep started."""
    computed: int
    seconds: float
    """Evaluating and writing, after the workers were ready."""
    startup_s: float
    """Starting (or connecting to) the workers."""
    damaged: int = 0
    """Parts found damaged when the sweep started, recomputed."""

    @property
    def runs_per_s(self) -> float:
        return self.computed / self.seconds if self.seconds > 0 else float("nan")


def run_sweep(
    sweep: Sweep,
    out: Path,
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    show_progress: bool = True,
) -> Outcome:
    """Run the chunks of ``sweep`` missing from ``out`` and return the totals.

    ``workers`` None: an analytic sweep runs in this process (its batched engine
    evaluates points faster than worker processes start), a DES sweep on a local
    cluster of one worker per core.  Everything that can fail before the first
    result is checked first (the directory and its lock, the parts already there,
    the workers), and only then is the manifest written.  Progress goes to standard
    error (a bar on a terminal, else a line every few seconds) unless ``show_progress``
    is False.
    """
    if workers is None and scheduler is None:
        workers = default_sweep_workers(sweep)
    check_workers(workers)
    if scheduler is not None:
        check_address(scheduler)
    results = ResultsDir(out)
    in_process = workers == 0 and scheduler is None
    analytic_here = in_process and sweep.file.engine is Engine.ANALYTIC
    known: dict[int, Scenario] | None = (
        {} if analytic_here and sweep.runs <= KEPT_SCENARIOS else None
    )
    with _collector_paused(analytic_here):
        with writer_lock(out):
            resolved = _resolve(sweep, show_progress, known)
            survey = results.survey(sweep, resume, resolved)
            context = sweep_context(sweep)
            chunks = chunk_tasks(sweep, resolved)
            pending = {n: tasks for n, tasks in enumerate(chunks) if n not in survey.finished}
            resumed = sum(len(tasks) for n, tasks in enumerate(chunks) if n in survey.finished)
            opened = time.perf_counter()
            with client(workers if pending else 0, scheduler if pending else None) as dask:
                results.prepare(sweep, survey, resolved)
                started = time.perf_counter()
                if dask is None:
                    evaluated = chunks_in_process(context, pending, known)
                else:
                    evaluated = _on_dask(dask, context, pending)
                unit = "points" if len(sweep.seeds) == 1 else "points x seeds"
                written: dict[int, pa.Table] = {}
                with _progress(sweep.file.name, sweep.runs, resumed, unit, show_progress) as (
                    bar,
                    task,
                ):
                    for number, table in evaluated:
                        results.write_part(number, table)
                        written[number] = table
                        bar.advance(task, len(pending[number]))
                seconds = time.perf_counter() - started
        table = read_results(out, written, (POINT, TRANSPORT, SEED, ERROR))
        failed, first_error = failures(table)
    return Outcome(
        rows=table.num_rows,
        runs=sweep.runs,
        failed=failed,
        first_error=first_error,
        resumed=resumed,
        computed=sweep.runs - resumed,
        seconds=seconds,
        startup_s=started - opened,
        damaged=len(survey.damaged),
    )


@contextmanager
def _collector_paused(paused: bool) -> Iterator[None]:
    """Python's cyclic garbage collector off (if ``paused``) while an analytic sweep runs in
    this process: its points' scenarios are many long-lived objects without cycles, which
    every full collection walks (a fifth of a 10,000-point sweep's CPU); reference counting
    still frees whatever the sweep drops."""
    enabled = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused and enabled:
            gc.enable()


def _resolve(sweep: Sweep, show_progress: bool, keep: dict[int, Scenario] | None) -> Resolved:
    """Every point resolved and fingerprinted, with a bar of its own (each valid point's
    scenario put in ``keep``); a DES sweep's work is added up meanwhile and refused over
    its cap (``WorkTally``)."""
    points = sweep.runs // len(sweep.seeds)
    tally = WorkTally(sweep, sweep.source) if sweep.file.engine is Engine.DES else None
    with _progress(f"{sweep.file.name}: resolving", points, 0, "points", show_progress) as bar:
        return resolve(
            sweep,
            package_version(),
            lambda n: bar[0].advance(bar[1], n),
            tally.visit if tally is not None else None,
            keep,
        )


def default_sweep_workers(sweep: Sweep) -> int | None:
    """Where a sweep runs unless told: analytic in this process (0), DES on Dask (None: one
    worker per core)."""
    return 0 if sweep.file.engine is Engine.ANALYTIC else None


def sweep_context(sweep: Sweep) -> Context:
    """What every task of ``sweep`` shares."""
    file = sweep.file
    return Context(
        base_label=file.base,
        base_raw=sweep.base_raw,
        transports=file.transports,
        baseline=sweep.baseline,
        engine=file.engine,
        rollouts=file.rollouts,
        axis_kinds=axis_kinds(file),
    )


def chunk_tasks(sweep: Sweep, resolved: Resolved | None = None) -> list[list[Task]]:
    """The runs (point x seed) in canonical order, cut into chunks of ``points_per_part``;
    with ``resolved``, each carries its point's scenario hash."""
    points = expand(sweep.file)
    hashes: list[str | None] = [None] * len(points)
    if resolved is not None:
        hashes = [found.decode() for found in resolved.hashes.tolist()]
    tasks = [
        Task(point, seed, assignments, hashes[point])
        for point, assignments in enumerate(points)
        for seed in sweep.seeds
    ]
    size = sweep.points_per_part
    return [tasks[first : first + size] for first in range(0, len(tasks), size)]


def _on_dask(client: Any, context: Context, pending: dict[int, list[Task]]) -> Iterator[Part]:
    """Chunks evaluated by Dask workers, as they finish; a chunk that raised gives error rows."""
    from dask.distributed import as_completed

    shared = client.scatter(context, broadcast=True, hash=False)
    futures = {
        client.submit(run_chunk_table, shared, tasks, pure=False): number
        for number, tasks in pending.items()
    }
    for future in as_completed(futures):
        number = futures.pop(future)
        if future.status == "error":
            error = future.exception()
            heads = [task.head(context) for task in pending[number]]
            table = to_table(
                [
                    row
                    for head in heads
                    for row in error_rows(head, context.transports, context.baseline, error)
                ],
                context.axis_kinds,
            )
        else:
            table = future.result()
        future.release()
        yield number, table


class _RateColumn(ProgressColumn):
    """Points per second over the recent past."""

    def render(self, task: ProgressTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} points/s", style="progress.data.speed")


@contextmanager
def _progress(
    label: str, total: int, done: int, unit: str, enabled: bool
) -> Iterator[tuple[Any, Any]]:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        _RateColumn(),
        TimeElapsedColumn(),
        TextColumn("elapsed"),
        TimeRemainingColumn(),
        TextColumn("left"),
    )
    with progress_bar(not enabled, *columns, transient=False) as bar:
        yield bar, bar.add_task(label, total=total, completed=done)
