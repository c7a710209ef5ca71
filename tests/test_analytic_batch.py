"""The batched analytic engine: many points at once give each point's one-point result,
bit for bit, whatever the batch mixes; a sweep chunk uses it without a fallback.

``expect`` is ``expect_columns`` on a column form of one scenario, so these tests
check that a point's result does not depend on its batch: different switches
(``store``, ``config_cache``), tool-call supports of different lengths, points
that rotate (the age grid) or not, points with and without a parallel-safety
excess, and points that fail validation in a sweep chunk.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.loading import raw_scenario
from models.scenario import Scenario
from sim.analysis.run import Engine, Spec, execute
from sim.analysis.summary import compare, summarize
from sim.analytic.agent import engine as analytic
from sim.analytic.agent.engine import Expectation, expect, expect_many
from sim.analytic.agent.expectations import Approximation
from sim.sweep import tasks as sweep_tasks
from sim.sweep.points import point_scenario
from sim.sweep.rows import flatten
from sim.sweep.tasks import Context, Task, run_chunk
from sim.turn.transports import Transport
from tests.support import CORE_PRESETS


def assert_identical(found: Expectation, expected: Expectation) -> None:
    assert np.array_equal(found.stage_s, expected.stage_s)
    for name in Expectation.__dataclass_fields__:
        if name != "stage_s":
            assert getattr(found, name) == getattr(expected, name), name


PARALLEL_CALLS = {"kind": "empirical", "values": [1, 2, 3], "weights": [2, 1, 1]}


def varied_points() -> list[Scenario]:
    """Points that exercise every path: supports, switches, rotation, drops, the excess,
    parallel calls, tools started on the call item, server errors, compaction, connections
    kept across rollouts."""
    base = raw_scenario("codex-spark")
    calls: list[Any] = [0, 1, 20, {"kind": "empirical", "values": [3, 9, 12], "weights": [1, 2, 1]}]
    decode: list[Any] = [65.0, {"kind": "lognormal", "median": 900.0, "sigma": 0.3}]
    points = []
    for rtt, count, store, config_cache, rate, lifetime, parallel in itertools.product(
        (5.0, 120.0), calls, (True, False), (True, False), decode, (4.0, 3600.0), (1.0, 3.0)
    ):
        assignments = {
            "network.rtt_ms": rtt,
            "workload.tool_calls_per_rollout": count,
            "connection.store": store,
            "api.config_cache": config_cache,
            "inference.decode_tps": rate,
            "connection.ws_drops_per_hour": rtt / 4,
            "connection.ws_lifetime_s": lifetime,
            "client.keepalive_idle_s": 0.05 if config_cache else 5.0,
            "api.intermediate_hops": 0 if store else 2,
            "safety.parallel_per_1k_tokens_ms": parallel,
            "kv_cache.residency": lifetime == 4.0,
            "kv_cache.ttl_s": 0.05 if store else 300.0,
            "workload.parallel_calls_per_turn": 1 if lifetime > 4.0 else PARALLEL_CALLS,
            "client.tool_starts_on_call_item": store,
            "retries.server_error_prob": 0.0 if config_cache else 0.05,
            "compaction.threshold_tokens": 16000.0 if rtt == 5.0 and parallel == 3.0 else 0.0,
            "compaction.summary_tokens": 1000.0,
            "connection.reuse_across_rollouts": count == 1,
            "compaction.tool_output_cap_tokens": 2000.0 if store else 0.0,
        }
        points.append(point_scenario(base, assignments))
    return points


@pytest.mark.slow
@pytest.mark.parametrize("transport", list(Transport))
def test_a_mixed_batch_gives_every_point_its_one_point_result(transport: Transport) -> None:
    points = varied_points()
    found = expect_many(points, transport)
    for result, scenario in zip(found, points, strict=True):
        assert_identical(result, expect(scenario, transport))
    seen = {name for result in found for name in result.approximations}
    if transport.is_websocket:
        assert seen == set(Approximation), "every path of the engine ran in this batch"
    else:
        assert seen == {
            Approximation.PARALLEL_EXCESS,
            Approximation.PREFIX_RESIDENCY,
            Approximation.PARALLEL_TOOLS,
            Approximation.COMPACTION,
        }


CALLS = st.one_of(
    st.integers(0, 60),
    st.lists(st.integers(0, 50), min_size=1, max_size=4, unique=True).map(
        lambda values: {"kind": "empirical", "values": values, "weights": [1.0] * len(values)}
    ),
)
POINT = st.fixed_dictionaries(
    {
        "workload.tool_calls_per_rollout": CALLS,
        "network.rtt_ms": st.floats(0.0, 500.0),
        "inference.decode_tps": st.floats(10.0, 5000.0),
        "api.render_cache_hit_prob": st.floats(0.0, 1.0),
        "connection.ws_drops_per_hour": st.floats(0.0, 600.0),
        "connection.ws_lifetime_s": st.floats(1.0, 3600.0),
        "connection.store": st.booleans(),
        "api.config_cache": st.booleans(),
        "client.keepalive_idle_s": st.floats(0.01, 10.0),
        "inference.prefix_cache_hit_fraction": st.floats(0.0, 1.0),
        "safety.parallel_per_1k_tokens_ms": st.floats(0.0, 20.0),
        "kv_cache.residency": st.booleans(),
        "kv_cache.ttl_s": st.floats(0.01, 1000.0),
    }
)


@pytest.mark.slow
@settings(max_examples=25, derandomize=True, deadline=None)
@given(points=st.lists(POINT, min_size=1, max_size=6), transport=st.sampled_from(list(Transport)))
def test_any_mix_of_valid_points_equals_point_by_point(
    points: list[dict[str, Any]], transport: Transport
) -> None:
    base = raw_scenario("codex-spark")
    scenarios = [point_scenario(base, assignments) for assignments in points]
    for found, scenario in zip(expect_many(scenarios, transport), scenarios, strict=True):
        assert_identical(found, expect(scenario, transport))
        assert found.e2e_s > 0 and np.all(found.stage_s >= 0)
        assert 1.0 <= found.cold_turns <= found.turns + 1e-9


@pytest.mark.parametrize("preset", CORE_PRESETS)
def test_every_core_preset_alone_and_among_others(preset: str) -> None:
    scenario = point_scenario(raw_scenario(preset), {})
    others = varied_points()[::16]
    for transport in Transport:
        found = expect_many([*others, scenario, *others], transport)[len(others)]
        assert_identical(found, expect(scenario, transport))


def test_the_results_keep_the_order_of_the_points() -> None:
    base = raw_scenario("codex-spark")
    points = [
        point_scenario(base, {"workload.tool_calls_per_rollout": calls, "network.rtt_ms": rtt})
        for calls, rtt in [(30, 1.0), (5, 2.0), (30, 3.0), (5, 4.0)]
    ]
    found = expect_many(points, Transport.WS)
    for result, scenario in zip(found, points, strict=True):
        assert_identical(result, expect(scenario, Transport.WS))
    assert found[0].e2e_s > found[1].e2e_s, "30 tool calls take longer than 5"
    assert found[0].e2e_s < found[2].e2e_s, "a longer round trip takes longer"


def context(**changes: Any) -> Context:
    fields = {
        "base_label": "codex-spark",
        "base_raw": raw_scenario("codex-spark"),
        "transports": (Transport.HTTP, Transport.WS, Transport.WS_APPEND),
        "baseline": Transport.HTTP,
        "engine": Engine.ANALYTIC,
        "rollouts": 500,
        "axis_kinds": {"network.rtt_ms": "float", "workload.tool_calls_per_rollout": "int"},
    }
    return Context(**{**fields, **changes})


def test_sweep_rows_carry_run_json_and_compare_json_values_under_flat_names() -> None:
    shared = context()
    tasks = [
        Task(0, 20260204, {"network.rtt_ms": 10.0, "workload.tool_calls_per_rollout": 25}),
        Task(1, 20260204, {"network.rtt_ms": 90.0}),
    ]
    rows = run_chunk(shared, tasks)
    assert len(rows) == 6
    for task, group in zip(tasks, (rows[:3], rows[3:]), strict=True):
        scenario = point_scenario(shared.base_raw, task.assignments, task.seed)
        runs = {
            t: execute(Spec(f"codex-spark:{t}", "codex-spark", t), scenario, Engine.ANALYTIC, 500)
            for t in shared.transports
        }
        for row, transport in zip(group, shared.transports, strict=True):
            assert row["transport"] == transport.value and row["point"] == task.point
            assert row["error"] is None and row["baseline"] == "http"
            expected = flatten(summarize(runs[transport]).to_json())
            # The row's seed is the sweep's, which names the run; an analytic result has none.
            assert expected.pop("seed") is None and row["seed"] == task.seed
            assert set(expected) <= set(row)
            for key, value in expected.items():
                assert row[key] == value, key
            if transport is Transport.HTTP:
                assert row.get("e2e_reduction") is None
            else:
                reductions = compare(runs[Transport.HTTP], runs[transport]).to_json()
                assert row["e2e_reduction"] == reductions["e2e_reduction"]
                assert row["api_cpu_reduction"] == reductions["api_cpu_reduction"]
        assert group[0]["network.rtt_ms"] == task.assignments["network.rtt_ms"]
        assert group[0]["workload.tool_calls_per_rollout"] == task.assignments.get(
            "workload.tool_calls_per_rollout"
        )


def test_points_that_fail_validation_become_error_rows_and_the_rest_are_exact() -> None:
    """A refused fleet point and an invalid value sit between valid points of one chunk."""
    shared = context(axis_kinds={"load.agents": "int", "network.rtt_ms": "float"})
    tasks = [
        Task(0, 1, {"network.rtt_ms": 12.0}),
        Task(1, 1, {"load.agents": 2}),
        Task(2, 1, {"network.rtt_ms": -5.0}),
        Task(3, 1, {"network.rtt_ms": 80.0, "load.agents": 1}),
    ]
    rows = run_chunk(shared, tasks)
    assert [r["point"] for r in rows] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert all("engine = 'analytic'" in r["error"] for r in rows[3:6])
    assert all("network.rtt_ms" in r["error"] for r in rows[6:9])
    for task, group in ((tasks[0], rows[:3]), (tasks[3], rows[9:])):
        scenario = point_scenario(shared.base_raw, task.assignments, task.seed)
        for row, transport in zip(group, shared.transports, strict=True):
            assert row["error"] is None
            assert row["e2e_s_mean"] == expect(scenario, transport).e2e_s


def test_an_exception_inside_the_engine_fails_the_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """No silent point-by-point retry: the error reaches the caller."""

    def broken(columns: Any, transport: Transport) -> None:
        raise FloatingPointError("inside the engine")

    monkeypatch.setattr(sweep_tasks, "expect_columns", broken)
    with pytest.raises(FloatingPointError, match="inside the engine"):
        run_chunk(context(), [Task(0, 1, {"network.rtt_ms": 10.0})])
    assert analytic.expect_columns is not broken
