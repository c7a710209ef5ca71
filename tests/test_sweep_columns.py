"""An analytic chunk's table, built column by column, against the rows of ``run_rows``.

The reference is the path every DES point takes: each point validated whole,
each transport's expectation from ``expect``, ``summarize`` and ``compare``
turned into flat rows, and ``to_table``.  The column builder must give the
same table: the same columns in the same order, the same Arrow types, the same
values bit for bit, error rows included.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from models.loading import raw_scenario
from models.scenario_hash import scenario_hash
from sim.analysis.run import AnalyticRun, Engine
from sim.analytic.agent.engine import expect
from sim.sweep.execute import chunk_tasks, sweep_context
from sim.sweep.points import Points
from sim.sweep.rows import error_rows, run_rows, to_table
from sim.sweep.sweepfile import load_sweep
from sim.sweep.tasks import Context, Task, analytic_scenario, run_chunk_table
from sim.turn.transports import Transport


def reference_table(context: Context, tasks: list[Task]) -> pa.Table:
    rows: list[dict[str, Any]] = []
    for task in tasks:
        head = task.head(context)
        try:
            scenario = analytic_scenario(context, task)
            runs = {
                t: AnalyticRun(
                    context.spec(t),
                    scenario,
                    Engine.ANALYTIC,
                    context.rollouts,
                    (),
                    expect(scenario, t),
                )
                for t in context.transports
            }
            rows.extend(run_rows(head, runs, context.baseline))
        except Exception as error:
            rows.extend(error_rows(head, context.transports, context.baseline, error))
    return to_table(rows, context.axis_kinds)


def assert_same_table(found: pa.Table, expected: pa.Table) -> None:
    assert found.column_names == expected.column_names
    assert found.schema.equals(expected.schema), (found.schema, expected.schema)
    assert found.equals(expected)


def context(transports: tuple[Transport, ...], baseline: Transport | None) -> Context:
    return Context(
        base_label="codex-spark",
        base_raw=raw_scenario("codex-spark"),
        transports=transports,
        baseline=baseline,
        engine=Engine.ANALYTIC,
        rollouts=500,
        axis_kinds={
            "network.rtt_ms": "float",
            "connection.ws_lifetime_s": "float",
            "load.agents": "int",
            "api.validate_fixed_ms": "float",
        },
    )


MIXED = [
    Task(0, 3, {"network.rtt_ms": 12.0}),
    Task(1, 3, {"load.agents": 2}),
    Task(2, 3, {"network.rtt_ms": -5.0}),
    Task(3, 3, {"network.rtt_ms": 80.0, "connection.ws_lifetime_s": 13.0}),
    Task(4, 4, {"connection.ws_lifetime_s": 20.0}),
    Task(5, 4, {}),
]
"""Valid points, a fleet point and an invalid value, points that rotate (approximations
on some rows only) and the base point."""


@pytest.mark.parametrize(
    ("transports", "baseline"),
    [
        ((Transport.HTTP, Transport.WS), Transport.HTTP),
        ((Transport.WS, Transport.HTTP, Transport.WS_APPEND), Transport.WS),
        ((Transport.WS,), None),
    ],
)
def test_mixed_chunk_matches_the_row_path(
    transports: tuple[Transport, ...], baseline: Transport | None
) -> None:
    shared = context(transports, baseline)
    assert_same_table(run_chunk_table(shared, MIXED), reference_table(shared, MIXED))


def test_a_chunk_of_errors_only_matches_the_row_path() -> None:
    shared = context((Transport.HTTP, Transport.WS), Transport.HTTP)
    tasks = [MIXED[1], MIXED[2]]
    assert_same_table(run_chunk_table(shared, tasks), reference_table(shared, tasks))


def test_a_zero_baseline_fails_as_its_reduction_would() -> None:
    """No API work at the baseline: its reduction divides by zero, as the row path's does."""
    shared = context((Transport.HTTP, Transport.WS), Transport.HTTP)
    zero_api = {
        f"api.{name}": 0.0
        for name in (
            "validate_fixed_ms",
            "validate_per_item_ms",
            "state_store_fixed_ms",
            "state_store_per_kb_ms",
            "memory_state_ms",
            "render_per_1k_tokens_ms",
            "route_ms",
            "route_cached_ms",
            "post_fixed_ms",
            "post_per_1k_tokens_ms",
        )
    }
    tasks = [Task(0, 1, zero_api), Task(1, 1, {"network.rtt_ms": 30.0})]
    found = run_chunk_table(shared, tasks)
    assert found.column("error")[0].as_py().startswith("ZeroDivisionError")
    assert_same_table(found, reference_table(shared, tasks))


@pytest.mark.parametrize("name", ["amdahl", "tornado", "turns_x_decode"])
def test_shipped_sweeps_match_the_row_path(name: str) -> None:
    sweep = load_sweep(f"sweeps/{name}.toml")
    shared = sweep_context(sweep)
    if shared.engine is not Engine.ANALYTIC:
        shared = Context(**{**shared.__dict__, "engine": Engine.ANALYTIC})
    tasks = chunk_tasks(sweep)[0][:120]
    assert_same_table(run_chunk_table(shared, tasks), reference_table(shared, tasks))


def test_points_validated_against_the_base_are_the_points_validated_whole() -> None:
    """``Points`` re-validates only the touched sections: the same scenario and hash."""
    sweep = load_sweep("sweeps/turns_x_decode.toml")
    shared = sweep_context(sweep)
    points = Points(shared.base_raw)
    for task in chunk_tasks(sweep)[0][:40]:
        whole = analytic_scenario(shared, task)
        fast = points.scenario(task.assignments, task.seed)
        assert fast == whole
        assert points.hash(fast) == scenario_hash(whole)
