"""Flat result rows: one per point x transport x seed.

A row holds the point index, the swept parameters (one column per axis path,
null where a one-at-a-time point leaves the axis at its base value), the
transport, the seed, the engine, an error message (null when the run
succeeded) and the run's summary with the names of ``run --json``, flattened:
``e2e_s.mean`` becomes ``e2e_s_mean``, ``budget_s.decode`` becomes
``budget_s_decode`` and a ``*_ci95`` pair becomes ``*_ci95_low`` and
``*_ci95_high``.  With two or more transports, the rows of the non-baseline
transports also carry ``compare --json``'s reductions over the baseline
(``e2e_reduction``, ...), and every row names the ``baseline``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sim.analysis.results import RunResult, UnmeasuredPoint
from sim.analysis.results import flatten as flat_json
from sim.analysis.run import Run
from sim.analysis.summary import compare, summarize
from sim.sweep.axes import Axis
from sim.sweep.sweepfile import SweepFile
from sim.turn.transports import Transport

POINT = "point"
TRANSPORT = "transport"
SEED = "seed"
ENGINE = "engine"
ERROR = "error"
BASELINE = "baseline"
INTEGER_COLUMNS = frozenset({POINT, SEED, "rollouts"})
"""Integer columns; every other number is stored as a float so parts concatenate."""
_TABLE_VALUE = re.compile(r"^(\S+) = \{.*?(?:\}|\.\.\.): ")
"""A cross-field error quotes its whole section (``api = {...}: ``); the rule suffices."""


@dataclass(frozen=True)
class Head:
    """The columns that say which run a row belongs to."""

    point: int
    params: dict[str, Any]
    """Axis path -> stored (encoded) value."""
    seed: int
    engine: str

    def row(self, transport: Transport, baseline: Transport | None) -> dict[str, Any]:
        row = {
            POINT: self.point,
            **self.params,
            TRANSPORT: transport.value,
            SEED: self.seed,
            ENGINE: self.engine,
            ERROR: None,
        }
        if baseline is not None:
            row[BASELINE] = baseline.value
        return row


def axis_kinds(file: SweepFile) -> dict[str, str]:
    """Axis path -> column kind (int, float, bool, str or json), from all its values."""
    return {axis.path: _kind(axis) for axis in file.axes}


def encode(kind: str, value: Any) -> Any:
    """A swept value as stored in its column (tables and lists as JSON text)."""
    if value is None:
        return None
    if kind == "json":
        return json.dumps(value, sort_keys=True)
    return float(value) if kind == "float" else value


def flatten(summary: dict[str, Any]) -> dict[str, Any]:
    """A result's JSON flattened to columns (``sim.analysis.results.flatten``), with every
    number but the integer columns stored as a float so that parts concatenate."""
    return {name: _number(name, value) for name, value in flat_json(summary).items()}


def run_rows(
    head: Head, runs: Mapping[Transport, Run], baseline: Transport | None
) -> list[dict[str, Any]]:
    """The rows of one point and seed from its runs (one per transport)."""
    results: dict[Transport, RunResult[Any] | UnmeasuredPoint] = {}
    reductions: dict[Transport, dict[str, Any]] = {}
    for transport, run in runs.items():
        if baseline is None or transport is baseline:
            continue
        both = compare(runs[baseline], run)
        results.setdefault(baseline, both.a)
        results[transport] = both.b
        payload = both.to_json()
        del payload["a"], payload["b"]
        reductions[transport] = flatten(payload)
    rows = []
    for transport, run in runs.items():
        result = results.get(transport) or summarize(run)
        row = head.row(transport, baseline)
        flat = flatten(result.to_json())
        row.update({k: v for k, v in flat.items() if k not in row})
        row.update(reductions.get(transport, {}))
        rows.append(row)
    return rows


def error_rows(
    head: Head,
    transports: tuple[Transport, ...],
    baseline: Transport | None,
    error: BaseException,
) -> list[dict[str, Any]]:
    """Rows recording that a point (all its transports) failed, with the error."""
    text = _TABLE_VALUE.sub(r"\1: ", (str(error).splitlines() or [""])[0])
    message = f"{type(error).__name__}: {text}"
    return [{**head.row(t, baseline), ERROR: message} for t in transports]


def _number(name: str, value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and name not in INTEGER_COLUMNS:
        return float(value)
    return value


def _kind(axis: Axis) -> str:
    values = axis.values
    if values is None:
        return "int" if axis.integer else "float"
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "float"
    if all(isinstance(v, str) for v in values):
        return "str"
    return "json"


def to_table(rows: list[dict[str, Any]], kinds: dict[str, str]) -> pa.Table:
    """Rows as an Arrow table, columns in order of first appearance (absent cells null).

    The axis columns (``kinds``: path -> kind) and the text columns have one type in
    every part, even a part where they are all null (a one-at-a-time base point, a
    chunk without failures), so the parts read as one dataset.
    """
    keys = list(dict.fromkeys(key for row in rows for key in row))
    types = {**{path: _ARROW_TYPES[kind] for path, kind in kinds.items()}, **_TEXT_COLUMNS}
    return pa.table(
        {key: pa.array([row.get(key) for row in rows], type=types.get(key)) for key in keys}
    )


_ARROW_TYPES = {
    "int": pa.int64(),
    "float": pa.float64(),
    "bool": pa.bool_(),
    "str": pa.string(),
    "json": pa.string(),
}
_TEXT_COLUMNS = {ERROR: pa.string(), BASELINE: pa.string(), "scenario_hash": pa.string()}
