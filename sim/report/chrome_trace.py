"""Write simulated turns as Chrome trace events (open in Perfetto or chrome://tracing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from models.stages import SIDES, STAGE_COLUMN, STAGES, Stage
from sim.turn.phases import JOINED_SIDES, PHASES, side_wait_column, wait_column
from sim.turn.records import TurnRecords

_US = 1e6


def trace_events(turns: TurnRecords, label: str) -> list[dict[str, Any]]:
    """Complete ("X") events: one process per rollout, one track per stage kind.

    Times are relative to each rollout's start.  A fleet's waits for a pool are
    spans on the queue track, right before the stage that takes the pool (or, for
    a side holding the turn waits for, right before the stage it is joined
    before).  Side holdings (the parallel classifiers, overlapped post-inference
    work) are drawn on their stage's track from the stage they start with,
    overlapping the critical path.
    """
    events: list[dict[str, Any]] = []
    rollouts = np.unique(turns.rollout)
    for rollout in rollouts:
        pid = int(rollout)
        events.append(_meta("process_name", pid, 0, f"{label} rollout {pid}"))
        for tid, stage in enumerate(STAGES):
            events.append(_meta("thread_name", pid, tid, stage.value))
    rollout_row = np.searchsorted(rollouts, turns.rollout)
    first_start_s = np.full(rollouts.size, np.inf)
    np.minimum.at(first_start_s, rollout_row, turns.start_at_s)
    origin = dict(zip(rollouts.tolist(), first_start_s.tolist(), strict=True))
    for row in range(turns.rollout.size):
        pid = int(turns.rollout[row])
        at_s = float(turns.start_at_s[row]) - origin[pid]
        args = {
            "turn": int(turns.turn_index[row]),
            "new_connection": bool(turns.cold[row]),
            "cached_prompt_tokens": float(turns.cached_prompt_tokens[row]),
            "uncached_prompt_tokens": float(turns.uncached_prompt_tokens[row]),
            "rate_limited": int(turns.rate_limited[row]),
        }
        for name, stage, duration_s, extra in _path(turns, row):
            for side in SIDES:
                side_s = float(turns.side_s(side)[row])
                if stage is side.info.starts_with and name == stage.value and side_s > 0:
                    track = side.info.stage
                    side_args = {**args, "overlapped": True, "side": side.value}
                    events.append(
                        _span(track.value, pid, STAGE_COLUMN[track], at_s, side_s, side_args)
                    )
            if duration_s > 0:
                span_args = {**args, **extra}
                events.append(_span(name, pid, STAGE_COLUMN[stage], at_s, duration_s, span_args))
            at_s += duration_s
    return events


def _path(turns: TurnRecords, row: int) -> list[tuple[str, Stage, float, dict[str, Any]]]:
    """A turn's critical path in order: (span name, track stage, seconds, extra args)."""
    path = []
    waits = turns.wait_s[row]
    for phase in PHASES:
        for stage in phase.stages:
            if phase.pool is not None and stage is phase.stages[0]:
                wait = float(waits[wait_column(phase)])
                path.append((Stage.QUEUE.value, Stage.QUEUE, wait, {"pool": phase.pool.value}))
            if phase.inner is not None and stage is phase.inner_stages[0]:
                wait = float(waits[wait_column(phase, nested=True)])
                path.append((Stage.QUEUE.value, Stage.QUEUE, wait, {"pool": phase.inner.value}))
            for side in JOINED_SIDES:
                if stage is side.info.joined_before:
                    wait = float(waits[side_wait_column(side)])
                    extra = {"pool": side.info.pool.value, "side": side.value}
                    path.append((Stage.QUEUE.value, Stage.QUEUE, wait, extra))
            path.append((stage.value, stage, float(turns.stage_s[row, STAGE_COLUMN[stage]]), {}))
    tool_s = float(turns.stage_s[row, STAGE_COLUMN[Stage.TOOL]])
    path.append((Stage.TOOL.value, Stage.TOOL, tool_s, {}))
    return path


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
