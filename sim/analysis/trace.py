"""Write simulated turns as Chrome trace events (open in Perfetto or chrome://tracing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from models.stages import STAGES, Stage
from sim.engine.records import TurnRecords

_US = 1e6
_POST_COLUMN = STAGES.index(Stage.POST)
_DECODE_END_COLUMN = STAGES.index(Stage.DECODE) + 1


def trace_events(turns: TurnRecords, label: str) -> list[dict[str, Any]]:
    """Complete ("X") events: one process per rollout, one track per stage kind.

    Times are relative to each rollout's start. Post-inference work done off the
    critical path is drawn on the post track, overlapping what follows.
    """
    events: list[dict[str, Any]] = []
    rollouts = np.unique(turns.rollout)
    rollout_start = {int(r): float(turns.start_at_s[turns.rollout == r].min()) for r in rollouts}
    for rollout in rollouts:
        pid = int(rollout)
        events.append(_meta("process_name", pid, 0, f"{label} rollout {pid}"))
        for tid, stage in enumerate(STAGES):
            events.append(_meta("thread_name", pid, tid, stage.value))
    ends = turns.start_at_s[:, None] + np.cumsum(turns.stage_s, axis=1)
    for row in range(turns.rollout.size):
        pid = int(turns.rollout[row])
        origin = rollout_start[pid]
        args = {"turn": int(turns.turn_index[row]), "new_connection": bool(turns.cold[row])}
        for tid, stage in enumerate(STAGES):
            duration = turns.stage_s[row, tid]
            if duration > 0:
                begin = ends[row, tid] - duration - origin
                events.append(_span(stage.value, pid, tid, begin, duration, args))
        overlapped = turns.post_overlapped_s[row]
        if overlapped > 0:
            begin = ends[row, _DECODE_END_COLUMN - 1] - origin
            span_args = {**args, "overlapped": True}
            events.append(_span(Stage.POST.value, pid, _POST_COLUMN, begin, overlapped, span_args))
    return events


def write_trace(path: Path, traces: dict[str, TurnRecords]) -> None:
    """Write one trace file; each entry (e.g. side a and b) gets its own process ids."""
    events: list[dict[str, Any]] = []
    for offset, (label, turns) in enumerate(traces.items()):
        for event in trace_events(turns, label):
            event["pid"] += offset * 1_000_000
            events.append(event)
    path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}))


def _meta(name: str, pid: int, tid: int, value: str) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": pid, "tid": tid, "args": {"name": value}}


def _span(
    name: str, pid: int, tid: int, begin_s: float, duration_s: float, args: dict[str, Any]
) -> dict[str, Any]:
    return {
        "name": name,
        "cat": "stage",
        "ph": "X",
        "pid": pid,
        "tid": tid,
        "ts": begin_s * _US,
        "dur": duration_s * _US,
        "args": args,
    }
