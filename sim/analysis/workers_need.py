"""How many local worker processes a command may start, estimated before any starts.

Each worker is a Python process of its own: the interpreter, the engine's
modules and the share of the work it is given (a fleet replication, a sweep
point).  ``load``, ``capacity`` and ``sweep`` refuse a worker count above
``MAX_WORKERS_PER_CORE`` per core, or one whose processes would together pass
the memory cap (40 workers of a fleet reached 4.3 GB before this check).
"""

from __future__ import annotations

import os

from models.errors import ScenarioError
from models.limits import MEMORY
from sim.analysis.estimates import Need, check, show_bytes

WORKER_PROCESS_BYTES = 128 * 2**20
"""A worker process before its work: the interpreter and the engine's modules (measured
90-106 MB resident; its pages are shared with the parent until written, so this errs high)."""
MAX_WORKERS_PER_CORE = 4
"""Local workers allowed per core: more only wait for the cores and hold memory."""


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def check_workers(option: str, workers: int, share_bytes: float) -> None:
    """Refuse ``workers`` local processes (``option`` names where the count came from) above
    the per-core limit, or whose estimated memory, each holding ``share_bytes`` of work on
    top of its own process, is over the memory cap."""
    cores = usable_cores()
    most = MAX_WORKERS_PER_CORE * cores
    if workers > most:
        raise ScenarioError(
            f"{option} = {workers}: at most {most} ({MAX_WORKERS_PER_CORE} per core, {cores} cores)"
        )
    each = WORKER_PROCESS_BYTES + share_bytes
    basis = f"{workers:,} worker processes x {show_bytes(WORKER_PROCESS_BYTES)} a process"
    if share_bytes > 0:
        basis = f"{basis} + {show_bytes(share_bytes)} of work each"
    check(Need(f"{option} = {workers}", workers * each, basis, 0.0, "", 1, fewer="fewer workers"))


def worker_share(needs: list[Need]) -> float:
    """The most any one worker holds while it runs its share of these runs."""
    return max(
        (need.memory_bytes if need.worker_bytes is None else need.worker_bytes for need in needs),
        default=0.0,
    )


def fitting_workers(share_bytes: float) -> int:
    """The default number of local workers: one per core, but no more than fit within the
    memory cap with ``share_bytes`` of work each (1: the work runs in this process)."""
    each = WORKER_PROCESS_BYTES + share_bytes
    return max(1, min(usable_cores(), int(MEMORY.limit() // each)))
