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

import pyarrow as pa

from models.errors import ScenarioError
from models.limits import MEMORY
from models.scenario import Scenario
from sim.analysis.estimates import analytic_batch_need, check_rollout_length, longest_rollout_turns
from sim.analysis.run import AnalyticRun, Engine, Spec, execute
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect_columns
from sim.sweep.points import point_scenario
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

    def head(self, context: Context) -> Head:
        params = {
            path: encode(kind, self.assignments.get(path))
            for path, kind in context.axis_kinds.items()
        }
        return Head(self.point, params, self.seed, context.engine.value)


def run_chunk_table(context: Context, tasks: list[Task]) -> pa.Table:
    """``run_chunk`` as an Arrow table: what travels back from a worker and becomes a part."""
    return to_table(run_chunk(context, tasks), context.axis_kinds)


def run_chunk(context: Context, tasks: list[Task]) -> list[dict[str, Any]]:
    """Rows of every task in ``tasks``, in task order then transport order."""
    if context.engine is Engine.ANALYTIC:
        return _analytic(context, tasks)
    return [row for task in tasks for row in _des(context, task)]


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


def _analytic(context: Context, tasks: list[Task]) -> list[dict[str, Any]]:
    """The valid points of all tasks evaluated together: one batched pass per transport."""
    scenarios: dict[int, Scenario | Exception] = {}
    for index, task in enumerate(tasks):
        try:
            scenarios[index] = analytic_scenario(context, task)
        except Exception as error:
            scenarios[index] = error
    valid = {index: s for index, s in scenarios.items() if isinstance(s, Scenario)}
    positions = list(valid)
    expectations: dict[Transport, dict[int, Any]] = {t: {} for t in context.transports}
    for batch_points in memory_batches(list(valid.values())):
        indices = [positions[i] for i in batch_points]
        columns = column_form([valid[i] for i in indices])
        for t in context.transports:
            batch = expect_columns(columns, t)
            expectations[t].update({index: batch.point(row) for row, index in enumerate(indices)})
    rows = []
    for index, task in enumerate(tasks):
        head = task.head(context)
        scenario = scenarios[index]
        if isinstance(scenario, Exception):
            rows.extend(error_rows(head, context.transports, context.baseline, scenario))
            continue
        runs = {
            t: AnalyticRun(
                context.spec(t),
                scenario,
                Engine.ANALYTIC,
                context.rollouts,
                (),
                expectations[t][index],
            )
            for t in context.transports
        }
        try:
            rows.extend(run_rows(head, runs, context.baseline))
        except Exception as error:
            rows.extend(error_rows(head, context.transports, context.baseline, error))
    return rows


def analytic_scenario(context: Context, task: Task) -> Scenario:
    """A point's scenario, refused where ``execute`` refuses the analytic engine."""
    scenario = point_scenario(context.base_raw, task.assignments, task.seed)
    if scenario.on_fleet:
        raise ScenarioError(
            "engine = 'analytic': it models one agent without contention or rate limits; "
            "use engine = 'des', or load.agents = 1 and no rate_limit"
        )
    check_rollout_length(f"point {task.point}", scenario)
    return scenario


def memory_batches(scenarios: list[Scenario]) -> list[list[int]]:
    """Consecutive groups of points evaluated together, each within the memory cap.

    A batch pads every point to its longest rollout; a point gives the same
    bits in any batch, so splitting changes nothing but the peak memory.
    """
    budget = MEMORY.limit()
    batches: list[list[int]] = []
    longest = 0
    for index, scenario in enumerate(scenarios):
        turns = max(longest, longest_rollout_turns(scenario))
        if batches and analytic_batch_need("", len(batches[-1]) + 1, turns).memory_bytes <= budget:
            batches[-1].append(index)
            longest = turns
        else:
            batches.append([index])
            longest = longest_rollout_turns(scenario)
    return batches
