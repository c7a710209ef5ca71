"""An analytic chunk's rows built as columns: one array pass per column, not one dict per row.

The batched engine gives every point's expectations as arrays; the rows of
``sim.sweep.rows.run_rows`` (a summary per run, its JSON flattened, the
reductions over the baseline) are those arrays with a few constant columns.
This module writes them straight into an Arrow table with the same columns, in
the same order, of the same types and values: ``tests/test_sweep_columns.py``
checks it against ``run_rows`` on the same points.
"""

from __future__ import annotations

import bisect
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from models.scenario import Scenario
from models.stages import STAGES
from sim.analysis.metrics import REDUCTIONS, Metric, Statistic
from sim.analytic.agent.expectations import Expectations
from sim.sweep.rows import (
    BASELINE,
    ENGINE,
    ERROR,
    POINT,
    SEED,
    TRANSPORT,
    error_rows,
    to_table,
)
from sim.turn.transports import Transport

if TYPE_CHECKING:
    from sim.sweep.tasks import Context, Task

_LATENCY = (Statistic.P50, Statistic.P95, Statistic.P99)
_NO_CI = ("ci95_low", "ci95_high")
_RESULT_HEAD = (
    Metric.SPEC.value,
    Metric.SCENARIO.value,
    Metric.SCENARIO_HASH.value,
    Metric.OVERRIDES.value,
    Metric.ROLLOUTS.value,
)
"""A result's head columns that the row's own head does not already hold, in JSON order."""


@dataclass(frozen=True)
class Evaluated:
    """A chunk's points: each task's scenario (or why it failed) and, per transport, the
    expectations of the valid points (rows in ``valid`` order) and their scenario hashes."""

    scenarios: list[Scenario | Exception]
    valid: list[int]
    expectations: dict[Transport, Expectations]
    hashes: list[str]

    def valid_scenarios(self) -> list[Scenario]:
        return [s for s in self.scenarios if isinstance(s, Scenario)]

    def tasks(self, first: int, last: int) -> Evaluated:
        """The same for the tasks ``first`` to ``last`` (excluded) only."""
        low, high = bisect.bisect_left(self.valid, first), bisect.bisect_left(self.valid, last)
        rows = np.arange(low, high)
        return Evaluated(
            self.scenarios[first:last],
            [index - first for index in self.valid[low:high]],
            {t: e.take(rows) for t, e in self.expectations.items()},
            self.hashes[low:high],
        )


def part_table(context: Context, tasks: list[Task], evaluated: Evaluated) -> pa.Table:
    """The chunk's rows (task order, then transport order) as one Arrow table."""
    if not evaluated.valid:
        # Only error rows: their columns are the head's, as the row path writes them.
        failed = [
            row
            for task, error in zip(tasks, evaluated.scenarios, strict=True)
            if isinstance(error, Exception)
            for row in error_rows(task.head(context), context.transports, context.baseline, error)
        ]
        return to_table(failed, context.axis_kinds)
    transports = context.transports
    count = len(tasks) * len(transports)
    columns: dict[str, Any] = {}
    valid = np.asarray(evaluated.valid, dtype=np.intp)

    def rows_of(position: int) -> np.ndarray:
        return valid * len(transports) + position

    _head_columns(context, tasks, evaluated, columns)
    for position, transport in enumerate(transports):
        rows = rows_of(position)
        e = evaluated.expectations[transport]
        e2e_s = e.stage_s.sum(axis=1) if len(valid) else np.zeros(0)
        text = _TextColumns(columns, count, rows)
        text.put(Metric.SPEC.value, context.spec(transport).text)
        text.put(Metric.SCENARIO.value, [s.name for s in evaluated.valid_scenarios()])
        text.put(Metric.SCENARIO_HASH.value, evaluated.hashes)
        text.put(Metric.OVERRIDES.value, "[]")
        _null(columns, Metric.ROLLOUTS.value)
        flags = [_flags_text(a) if a else None for a in e.approximations]
        if any(flags):
            text.put(Metric.APPROXIMATIONS.value, flags)
        numbers = _NumberColumns(columns, count, rows)
        for metric, mean in ((Metric.E2E_S, e2e_s), (Metric.TTFT_S, e.ttft_sum_s / e.turns)):
            numbers.put(f"{metric.value}_{Statistic.MEAN.value}", mean)
            for name in (*[s.value for s in _LATENCY], *_NO_CI):
                _null(columns, f"{metric.value}_{name}")
        numbers.put(Metric.API_CPU_S_PER_ROLLOUT.value, e.api_cpu_s)
        numbers.put(Metric.SAFETY_CPU_S_PER_ROLLOUT.value, e.safety_cpu_s)
        numbers.put(Metric.TURNS_PER_ROLLOUT.value, e.turns)
        numbers.put(Metric.RECONNECTS_PER_ROLLOUT.value, e.cold_turns)
        cached = e.cached_prompt_tokens
        numbers.put(
            Metric.PREFIX_CACHE_HIT_RATE.value, cached / (cached + e.uncached_prompt_tokens)
        )
        for column, stage in enumerate(STAGES):
            numbers.put(f"{Metric.BUDGET_S.value}_{stage.value}", e.stage_s[:, column])
        for column, stage in enumerate(STAGES):
            numbers.put(f"{Metric.BUDGET_SHARE.value}_{stage.value}", e.stage_s[:, column] / e2e_s)
        if context.baseline is None or transport is context.baseline:
            continue
        base = evaluated.expectations[context.baseline]
        befores: dict[Metric, Callable[[Expectations], np.ndarray]] = {
            Metric.E2E_REDUCTION: lambda x: x.stage_s.sum(axis=1),
            Metric.TTFT_REDUCTION: lambda x: x.ttft_sum_s / x.turns,
            Metric.API_CPU_REDUCTION: lambda x: x.api_cpu_s,
        }
        for metric in REDUCTIONS:
            numbers.put(metric.value, 1.0 - befores[metric](e) / befores[metric](base))
            for name in _NO_CI:
                _null(columns, f"{metric.ci95.value}_{name[5:]}")
    return _assemble(context, tasks, evaluated, columns, count)


def _head_columns(
    context: Context, tasks: list[Task], evaluated: Evaluated, columns: dict[str, Any]
) -> None:
    transports = context.transports
    per_task = len(transports)
    columns[POINT] = [task.point for task in tasks for _ in transports]
    for path, kind in context.axis_kinds.items():
        heads = [task.axis_value(path, kind) for task in tasks]
        columns[path] = pa.array([v for v in heads for _ in transports], type=_AXIS[kind])
    columns[TRANSPORT] = [t.value for _ in tasks for t in transports]
    columns[SEED] = [task.seed for task in tasks for _ in transports]
    columns[ENGINE] = [context.engine.value] * (len(tasks) * per_task)
    errors: list[str | None] = [None] * (len(tasks) * per_task)
    for index, scenario in enumerate(evaluated.scenarios):
        if isinstance(scenario, Exception):
            head = tasks[index].head(context)
            for position, row in enumerate(
                error_rows(head, transports, context.baseline, scenario)
            ):
                errors[index * per_task + position] = row[ERROR]
    columns[ERROR] = errors
    if context.baseline is not None:
        columns[BASELINE] = [context.baseline.value] * (len(tasks) * per_task)


def _assemble(
    context: Context, tasks: list[Task], evaluated: Evaluated, columns: dict[str, Any], count: int
) -> pa.Table:
    arrays = {}
    for name in _column_order(context, tasks, evaluated, columns):
        values = columns[name]
        if isinstance(values, pa.Array):
            arrays[name] = values
        elif isinstance(values, _Nulls):
            arrays[name] = pa.nulls(count)
        elif isinstance(values, _Numbers):
            arrays[name] = pa.array(values.values, mask=values.missing, type=pa.float64())
        else:
            arrays[name] = pa.array(values, type=_TYPES.get(name))
    return pa.table(arrays)


def _column_order(
    context: Context, tasks: list[Task], evaluated: Evaluated, columns: dict[str, Any]
) -> list[str]:
    """Columns in order of first appearance over the rows, as ``to_table`` orders them: a
    row's keys are its head's, then for a valid run its result's (approximations only
    where it has some), then for a non-baseline transport the reductions."""
    head = [POINT, *context.axis_kinds, TRANSPORT, SEED, ENGINE, ERROR]
    if context.baseline is not None:
        head.append(BASELINE)
    result = [name for name in columns if name not in head and name not in _RESULT_HEAD]
    approximations = Metric.APPROXIMATIONS.value
    reductions = [name for name in result if name.startswith(_REDUCTION_PREFIXES)]
    body = [name for name in result if name not in reductions and name != approximations]
    flagged = {
        t: np.array([bool(a) for a in e.approximations], dtype=bool)
        for t, e in evaluated.expectations.items()
    }
    order = dict.fromkeys(head)
    # Each shape of result row where it first appears over the rows (valid point by valid
    # point, transport by transport).
    first_row: dict[tuple[bool, bool], int] = {}
    transports = context.transports
    for position, transport in enumerate(transports):
        for flag in (False, True):
            points = np.flatnonzero(flagged[transport] == flag)
            if points.size:
                shape = (flag, transport is not context.baseline)
                row = int(points[0]) * len(transports) + position
                first_row[shape] = min(first_row.get(shape, row), row)
    for shape in sorted(first_row, key=first_row.__getitem__):
        order.update(dict.fromkeys(_RESULT_HEAD))
        if shape[0]:
            order[approximations] = None
        order.update(dict.fromkeys(body))
        if shape[1] and context.baseline is not None:
            order.update(dict.fromkeys(reductions))
    return list(order)


_REDUCTION_PREFIXES = tuple(metric.value for metric in REDUCTIONS)


class _Nulls:
    """A column every row leaves empty (an analytic engine's percentiles and intervals)."""


class _Numbers:
    def __init__(self, count: int) -> None:
        self.values = np.zeros(count)
        self.missing = np.ones(count, dtype=bool)


def _null(columns: dict[str, Any], name: str) -> None:
    columns.setdefault(name, _Nulls())


class _NumberColumns:
    def __init__(self, columns: dict[str, Any], count: int, rows: np.ndarray) -> None:
        self.columns, self.count, self.rows = columns, count, rows

    def put(self, name: str, values: np.ndarray) -> None:
        column = self.columns.setdefault(name, _Numbers(self.count))
        column.values[self.rows] = values
        column.missing[self.rows] = False


class _TextColumns:
    def __init__(self, columns: dict[str, Any], count: int, rows: np.ndarray) -> None:
        self.columns, self.count, self.rows = columns, count, rows

    def put(self, name: str, values: Sequence[str | None] | str) -> None:
        """Set the rows' values (one each, or the same text for all)."""
        column = self.columns.get(name)
        if column is None:
            column = self.columns[name] = np.full(self.count, None, dtype=object)
        if isinstance(values, str):
            column[self.rows] = values
            return
        if len(values) != len(self.rows):
            raise ValueError(f"{name}: {len(values)} values for {len(self.rows)} rows")
        column[self.rows] = np.fromiter(values, dtype=object, count=len(values))


@functools.lru_cache(maxsize=256)
def _flags_text(approximations: tuple[str, ...]) -> str:
    """A result's approximations column: the flags as a JSON list."""
    return json.dumps(list(approximations))


_AXIS = {
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "str": pa.string(),
    "json": pa.string(),
}
_TYPES = {ERROR: pa.string(), BASELINE: pa.string(), Metric.SCENARIO_HASH.value: pa.string()}
