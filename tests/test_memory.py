"""Freed memory kept for the next block (``sim.des.memory``), in a fresh process each."""

from __future__ import annotations

import subprocess
import sys

import pytest

FAULTS = """
import resource, sys
import numpy as np
from sim.des.memory import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else None
for _ in range(3):  # the allocator's own thresholds settle on the first rounds
    arrays = [np.ones(30_000) for _ in range(40)]
    del arrays
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    arrays = [np.ones(30_000) for _ in range(40)]
    del arrays
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, check=True
    )
    kept, faults = done.stdout.split()
    return kept, int(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_blocks_of_arrays_fault_their_pages_in_once() -> None:
    """Without the settings, arrays the size of a block freed and made again fault their
    pages in each time (40 arrays of 240 kB are 2,400 pages); with them, hardly at all."""
    kept, faults_kept = _faults("keep")
    _, faults_default = _faults("default")
    assert kept == "True"
    assert faults_kept < 100
    assert faults_default > 10 * max(faults_kept, 100)
