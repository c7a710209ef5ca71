"""Where a fleet replication reports how far it has run, so a bar can move while it runs.

A replication reports ``(job, fraction)`` at each checkpoint of its window (the
simulated clock over the window's end) and 1.0 when it returns.  The process
decides where reports go by setting ``sink``: a front end's bar in this process,
or, in a worker process, a queue back to the process that shows the bar.  With no
sink, nothing is reported; a report never changes what is simulated.
"""

from __future__ import annotations

from collections.abc import Callable

Sink = Callable[[str, float], None]

sink: Sink | None = None
"""This process's receiver of replication progress (None: nobody listens)."""


def report(job: str | None, fraction: float) -> None:
    """Tell the sink that ``job`` has run ``fraction`` (0 to 1) of its simulated time."""
    if job is not None and sink is not None:
        sink(job, min(max(fraction, 0.0), 1.0))
