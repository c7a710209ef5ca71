"""CPU seconds of what a benchmark times: callables in this process, in interleaved rounds,
and commands run as child processes; the best round of each is kept."""

from __future__ import annotations

import gc
import resource
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""Where child commands run: the project's root."""


def best_cpu_s(runs: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Best CPU seconds of each callable over ``repeats`` interleaved rounds."""
    best = [float("inf")] * len(runs)
    for _ in range(repeats):
        for index, run in enumerate(runs):
            gc.collect()
            began = time.process_time()
            run()
            best[index] = min(best[index], time.process_time() - began)
    return best


def child_cpu_s(command: list[str], repeats: int) -> float:
    """Best CPU seconds (user + system) of a command run as a child process."""
    best = float("inf")
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, capture_output=True, check=False, cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        best = min(best, used)
    return best
