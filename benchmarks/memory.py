"""Peak memory of one engine run, measured in a fresh subprocess per measurement.

``python -m benchmarks.memory ROLLOUTS TRANSPORT METHOD`` runs the engine once and
prints one JSON object.  METHOD ``tracemalloc`` reports the peak of Python's
traced allocations (numpy arrays included); ``rss`` reports how far the resident
set's high-water mark rose above the resident set at the start of the run,
without tracemalloc's own overhead.  Each runs in its own process so runs do
not pollute each other's high-water marks.

On Linux the high-water mark is reset just before the run and read from
``/proc/self/status`` (VmHWM): ``getrusage``'s maxrss of a child also counts
the peak of the parent image it was forked from (the kernel carries it over
at exec), which hides a small run's growth.  Elsewhere maxrss is used.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tracemalloc
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from models.loading import load_scenario
from models.stages import STAGES
from sim.des.runners import simulate
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

SCENARIO = "codex-spark"
METHODS = ("tracemalloc", "rss")
_FLOAT_BYTES = np.dtype(float).itemsize
_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


@dataclass(frozen=True)
class Memory:
    """Peak memory of one run next to the size of the arrays the run keeps."""

    method: str
    rollouts: int
    turns: int
    peak_bytes: int
    """Peak traced bytes (tracemalloc) or resident high-water growth (rss) during the run."""
    retained_bytes: int
    """All arrays of the returned records."""
    turn_arrays_bytes: int
    """The per-turn arrays among them (``turn_ttft_s``)."""
    stage_matrix_bytes: int
    """What a per-turn stage matrix of all turns would take (turns x stages x 8 bytes)."""

    @property
    def rollout_arrays_bytes(self) -> int:
        return self.retained_bytes - self.turn_arrays_bytes


def measure_memory(rollouts: int, transport: Transport, method: str) -> Memory:
    """Run the measurement in a fresh interpreter and read its result."""
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", str(rollouts), transport.value, method],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return Memory(**json.loads(completed.stdout))


def _measure_here(rollouts: int, transport: Transport, method: str) -> Memory:
    scenario = load_scenario(SCENARIO)
    if method == "tracemalloc":
        tracemalloc.start()
        records = simulate(scenario, transport, rollouts)
        _, peak_bytes = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    else:
        before_bytes = _resident_bytes("VmRSS")
        _reset_peak_resident()
        records = simulate(scenario, transport, rollouts)
        peak_bytes = _resident_bytes("VmHWM") - before_bytes
    turns = int(records.turns.sum())
    return Memory(
        method=method,
        rollouts=records.count,
        turns=turns,
        peak_bytes=peak_bytes,
        retained_bytes=_array_bytes(records),
        turn_arrays_bytes=records.turn_ttft_s.nbytes,
        stage_matrix_bytes=turns * len(STAGES) * _FLOAT_BYTES,
    )


def _array_bytes(records: RolloutRecords) -> int:
    values = (getattr(records, f.name) for f in fields(records))
    return sum(value.nbytes for value in values if isinstance(value, np.ndarray))


def _resident_bytes(field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (high-water mark) of this process, in bytes.

    Without ``/proc`` both are the maxrss high-water mark (KiB, bytes on macOS).
    """
    if not _STATUS.exists():
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return maxrss if sys.platform == "darwin" else maxrss * 1024
    for line in _STATUS.read_text().splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value.split()[0]) * 1024
    raise RuntimeError(f"{field} not found in {_STATUS}")


def _reset_peak_resident() -> None:
    """Set the high-water mark to the current resident set (Linux clear_refs code 5)."""
    if _CLEAR_REFS.exists():
        _CLEAR_REFS.write_text("5")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rollouts", type=int)
    parser.add_argument("transport", type=Transport, choices=list(Transport))
    parser.add_argument("method", choices=METHODS)
    args = parser.parse_args()
    print(json.dumps(asdict(_measure_here(args.rollouts, args.transport, args.method))))


if __name__ == "__main__":
    main()
