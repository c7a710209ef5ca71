"""What a worker runs: a chunk of (point, seed) runs, every transport, as flat rows.

Everything here is picklable and free of I/O, so the same function runs in
this process, in a local Dask cluster or on a remote one.  A point that fails
(an invalid combination of values, a DES run that raises) becomes error rows;
the rest of the chunk goes on.  An analytic chunk's valid points are
evaluated together by the batched engine, and an exception inside it is not
caught: it fails the chunk, so the sweep reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from models.errors import ScenarioError
from models.limits import MEMORY
from models.scenario import Scenario
from sim.analysis.estimates import (
    analytic_batch_bytes,
    check_rollout_length,
    longest_rollout_turns,
)
from sim.analysis.run import Engine, Spec, execute
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect_columns
from sim.analytic.agent.expectations import Expectations, stitch
from sim.sweep.analytic_part import Evaluated, part_table
from sim.sweep.points import Points, point_scenario
from sim.sweep.rows import Head, encode, error_rows, run_rows, to_table
from sim.turn.transports import Transport


@dataclass(frozen=True)
class Context:
    """What every task of a sweep shares."""

    base_label: str
    base_raw: dict[str, Any]
    transports: tuple[Transport, ...]
    baseline: Transport | None
    engine: Engine
    rollouts: int
    axis_kinds: dict[str, str]

    def spec(self, transport: Transport) -> Spec:
        return Spec(f"{self.base_label}:{transport.value}", self.base_label, transport)


@dataclass(frozen=True)
class Task:
    """One point with one seed: every transport of the sweep is run on it."""

    point: int
    seed: int
    assignments: dict[str, Any]
    scenario_hash: str | None = None
    """The point's scenario hash when the sweep resolved it first (``sim.sweep.fingerprint``):
    the seed is not hashed, so it is this run's too and is not computed again."""

    def head(self, context: Context) -> Head:
        params = {path: self.axis_value(path, kind) for path, kind in context.axis_kinds.items()}
        return Head(self.point, params, self.seed, context.engine.value)

    def axis_value(self, path: str, kind: str) -> Any:
        """The point's value of axis ``path`` as its column stores it."""
        return encode(kind, self.assignments.get(path))


def run_chunk_table(
    context: Context, tasks: list[Task], known: dict[int, Scenario] | None = None
) -> pa.Table:
    """A chunk's rows as an Arrow table: what travels back from a worker and becomes a part.

    ``known`` (in this process) holds points' scenarios as the sweep resolved them; an
    analytic chunk takes its points' out of it instead of validating them again.
    """
    if context.engine is Engine.ANALYTIC:
        return part_table(context, tasks, _analytic(context, tasks, known or {}))
    return to_table([row for task in tasks for row in _des(context, task)], context.axis_kinds)


def run_analytic_chunks(
    context: Context, chunks: list[list[Task]], known: dict[int, Scenario] | None = None
) -> list[pa.Table]:
    """Analytic chunks evaluated together, each chunk's table as ``run_chunk_table`` makes
    it: one column form and one engine pass per transport (and memory batch) for them all,
    instead of one per chunk.  A point gives the same bits in any batch."""
    tasks = [task for chunk in chunks for task in chunk]
    evaluated = _analytic(context, tasks, known or {})
    tables = []
    first = 0
    for chunk in chunks:
        own = evaluated.tasks(first, first + len(chunk))
        tables.append(part_table(context, chunk, own))
        first += len(chunk)
    return tables


def run_chunk(context: Context, tasks: list[Task]) -> list[dict[str, Any]]:
    """Rows of every task in ``tasks``, in task order then transport order."""
    return run_chunk_table(context, tasks).to_pylist()


def _des(context: Context, task: Task) -> list[dict[str, Any]]:
    head = task.head(context)
    try:
        scenario = point_scenario(context.base_raw, task.assignments, task.seed)
        runs = {
            t: execute(context.spec(t), scenario, Engine.DES, context.rollouts)
            for t in context.transports
        }
        return run_rows(head, runs, context.baseline)
    except Exception as error:
        return error_rows(head, context.transports, context.baseline, error)


def _analytic(context: Context, tasks: list[Task], known: dict[int, Scenario]) -> Evaluated:
    """The valid points of all tasks evaluated together: one batched pass per transport.

    Points are validated against the sweep's base once (``Points``) and hashed once.
    A point whose baseline has nothing to reduce (a zero mean) fails as its row's
    reduction would.
    """
    made: list[Points] = []

    def points() -> Points:  # made when a point was not resolved before
        if not made:
            made.append(Points(context.base_raw))
        return made[0]

    passed: set[int] = set()
    scenarios: list[Scenario | Exception] = []
    for task in tasks:
        try:
            resolved = known.pop(task.point, None)
            if resolved is not None and resolved.seed != task.seed:
                resolved = None
            own = points() if resolved is None else None
            scenarios.append(analytic_scenario(context, task, own, passed, resolved))
        except Exception as error:
            scenarios.append(error)
    valid = [index for index, s in enumerate(scenarios) if isinstance(s, Scenario)]
    chosen = [s for s in scenarios if isinstance(s, Scenario)]
    if not chosen:
        return Evaluated(scenarios, [], {}, [])
    parts: dict[Transport, list[tuple[np.ndarray, Expectations]]] = {
        t: [] for t in context.transports
    }
    for batch_points in memory_batches(chosen):
        columns = column_form([chosen[i] for i in batch_points])
        for t in context.transports:
            parts[t].append((np.asarray(batch_points), expect_columns(columns, t)))
    expectations = {t: stitch(parts[t], len(valid)) for t in context.transports}
    nothing_to_reduce = _zero_baseline(context, expectations)
    for row in np.flatnonzero(nothing_to_reduce).tolist():
        scenarios[valid[row]] = ZeroDivisionError("float division by zero")
    if nothing_to_reduce.any():
        keep = np.flatnonzero(~nothing_to_reduce)
        expectations = {t: e.take(keep) for t, e in expectations.items()}
        valid = [valid[row] for row in keep.tolist()]
    hashes = [
        points().hash(s) if task.scenario_hash is None else task.scenario_hash
        for task, s in zip(tasks, scenarios, strict=True)
        if isinstance(s, Scenario)
    ]
    return Evaluated(scenarios, valid, expectations, hashes)


def _zero_baseline(context: Context, expectations: dict[Transport, Expectations]) -> np.ndarray:
    """Points whose baseline mean of a reduced quantity is zero (no reduction is defined)."""
    any_point = next(iter(expectations.values()))
    zero = np.zeros(len(any_point), dtype=bool)
    if context.baseline is None or len(context.transports) < 2:
        return zero
    base = expectations[context.baseline]
    for before in (base.stage_s.sum(axis=1), base.ttft_sum_s / base.turns, base.api_cpu_s):
        zero |= before == 0
    return zero


def analytic_scenario(
    context: Context,
    task: Task,
    points: Points | None = None,
    passed: set[int] | None = None,
    resolved: Scenario | None = None,
) -> Scenario:
    """A point's scenario, refused where ``execute`` refuses the analytic engine.

    ``passed`` holds the longest-rollout lengths already checked and let through: the
    check depends on nothing else (and the caps), so a chunk checks each length once.
    ``resolved`` is the point's scenario with the task's seed, already validated.
    """
    if resolved is not None:
        scenario = resolved
    elif points is None:
        scenario = point_scenario(context.base_raw, task.assignments, task.seed)
    else:
        scenario = points.scenario(task.assignments, task.seed)
    if scenario.on_fleet:
        raise ScenarioError(
            "engine = 'analytic': it models one agent without contention or rate limits; "
            "use engine = 'des', or load.agents = 1 and no rate_limit"
        )
    longest = longest_rollout_turns(scenario)
    if passed is None or longest not in passed:
        check_rollout_length(f"point {task.point}", scenario)
        if passed is not None:
            passed.add(longest)
    return scenario


def memory_batches(scenarios: list[Scenario]) -> list[list[int]]:
    """Consecutive groups of points evaluated together, each within the memory cap.

    A batch pads every point to its longest rollout; a point gives the same
    bits in any batch, so splitting changes nothing but the peak memory.
    """
    budget = MEMORY.limit()
    lengths = [longest_rollout_turns(scenario) for scenario in scenarios]
    if lengths and min(lengths) == max(lengths):
        size = _most_points(len(lengths), lengths[0], budget)
        return [
            list(range(first, min(first + size, len(lengths))))
            for first in range(0, len(lengths), size)
        ]
    batches: list[list[int]] = []
    longest = 0
    for index, own in enumerate(lengths):
        turns = max(longest, own)
        if batches and analytic_batch_bytes(len(batches[-1]) + 1, turns) <= budget:
            batches[-1].append(index)
            longest = turns
        else:
            batches.append([index])
            longest = own
    return batches


def _most_points(points: int, turns: int, budget: float) -> int:
    """The most points of ``turns`` turns (at most ``points``, at least one) that one batch
    holds within ``budget``, as adding points one by one finds them: bisected, the bytes
    growing with the points."""
    low, high = 1, points
    while low < high:
        middle = (low + high + 1) // 2
        if analytic_batch_bytes(middle, turns) <= budget:
            low = middle
        else:
            high = middle - 1
    return low
