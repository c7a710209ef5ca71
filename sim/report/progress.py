"""Progress of long commands on standard error: a bar on a terminal, else a line every few
seconds (``--quiet``: nothing).

``progress_bar`` gives an object with rich's ``Progress`` calls (``add_task``,
``update``, ``advance``), so a command writes its progress once for both.
``replication_progress`` moves a task with the simulated time of fleet
replications as they run (``sim.des.progress``), here or in worker processes.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from sim.des import progress

LINE_EVERY_S = 5.0
"""Seconds between two progress lines without a terminal."""


class PlainProgress:
    """Progress as plain lines on standard error, one every ``every_s`` seconds per task and
    one when a task that printed completes: for logs and pipes, where a bar would be noise.
    Work done within ``every_s`` prints nothing."""

    def __init__(
        self, every_s: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.every_s = LINE_EVERY_S if every_s is None else every_s
        self.clock = clock
        self.tasks: dict[int, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> int:
        task = len(self.tasks)
        now = self.clock()
        self.tasks[task] = {
            "description": description,
            "total": total,
            "completed": float(fields.get("completed", 0.0)),
            "started": now,
            "printed": now,
            "lines": 0,
            "finished": False,
        }
        return task

    def update(
        self,
        task: int,
        *,
        completed: float | None = None,
        total: float | None = None,
        description: str | None = None,
        advance: float | None = None,
        **_: Any,
    ) -> None:
        with self.lock:
            state = self.tasks[task]
            if description is not None:
                state["description"] = description
            if total is not None:
                state["total"] = total
            if completed is not None:
                state["completed"] = float(completed)
            if advance is not None:
                state["completed"] += advance
            now = self.clock()
            total = state["total"]
            finished = total is not None and state["completed"] >= total
            if state["finished"] and not finished:
                state["finished"] = False  # more work was planned (a capacity search)
            if state["finished"]:
                return
            if now - state["printed"] >= self.every_s or (finished and state["lines"]):
                state["printed"], state["finished"] = now, finished
                state["lines"] += 1
                print(self.line(state, now), file=sys.stderr, flush=True)

    def advance(self, task: int, advance: float = 1.0) -> None:
        self.update(task, advance=advance)

    @staticmethod
    def line(state: dict[str, Any], now: float) -> str:
        done, total = state["completed"], state["total"]
        elapsed_s = now - state["started"]
        text = f"{state['description']}: {done:,.1f}"
        if total:
            text += f"/{total:,.0f} ({100 * done / total:.0f}%)"
        text += f", {_clock(elapsed_s)} elapsed"
        if total and 0 < done < total:
            text += f", about {_clock(elapsed_s * (total - done) / done)} left"
        return text


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def progress_bar(quiet: bool = False, *columns: Any, transient: bool = True) -> Any:
    """A rich bar on a terminal; plain lines when standard error is not one; nothing if
    ``quiet``.  ``columns`` replace the default description, bar, count and time left."""
    columns = columns or (
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    if quiet or sys.stderr.isatty():
        return Progress(*columns, console=Console(stderr=True), transient=transient, disable=quiet)
    return PlainProgress()


@contextmanager
def replication_progress(bar: Any, task: Any) -> Iterator[Callable[[float], None]]:
    """Move ``task`` by fleet replications' simulated time while they run: its completed
    count is the sum of every replication's fraction run.  Yields ``at_least(n)``: a floor
    for when whole replications are known to be done (a report may not arrive from a
    remote worker).  The count never goes back."""
    fractions: dict[str, float] = {}
    floor = [0.0]
    lock = threading.Lock()
    shown = [0.0]

    def show() -> None:
        value = max(sum(fractions.values()), floor[0], shown[0])
        if value > shown[0]:
            shown[0] = value
            bar.update(task, completed=value)

    def sink(job: str, fraction: float) -> None:
        with lock:
            fractions[job] = max(fractions.get(job, 0.0), fraction)
            show()

    def at_least(count: float) -> None:
        with lock:
            floor[0] = max(floor[0], count)
            show()

    previous, progress.sink = progress.sink, sink
    try:
        yield at_least
    finally:
        progress.sink = previous
