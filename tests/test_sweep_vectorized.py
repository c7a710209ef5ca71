"""The vectorized analytic engine equals ``sim.analytic.expect`` point by point."""

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
from sim.engine import analytic
from sim.engine.analytic import Expectation, expect
from sim.engine.transports import Transport
from sim.sweep import vectorized
from sim.sweep.points import point_scenario
from sim.sweep.rows import flatten
from sim.sweep.tasks import Context, Task, run_chunk
from sim.sweep.vectorized import expect_many
from tests.support import CORE_PRESETS

RELATIVE = 1e-12


def assert_equal(found: Expectation, expected: Expectation) -> None:
    np.testing.assert_allclose(found.stage_s, expected.stage_s, rtol=RELATIVE, atol=0)
    for name in ("turns", "cold_turns", "ttft_sum_s", "api_cpu_s", "safety_cpu_s"):
        assert getattr(found, name) == pytest.approx(getattr(expected, name), rel=RELATIVE), name


def varied_points() -> list[Scenario]:
    """Points that exercise every branch: call supports, store, config cache, rotation."""
    base = raw_scenario("codex-spark")
    calls: list[Any] = [1, 20, {"kind": "empirical", "values": [3, 9, 12], "weights": [1, 2, 1]}]
    decode: list[Any] = [65.0, {"kind": "lognormal", "median": 900.0, "sigma": 0.3}]
    points = []
    for rtt, count, store, config_cache, rate in itertools.product(
        (5.0, 120.0), calls, (True, False), (True, False), decode
    ):
        points.append(
            point_scenario(
                base,
                {
                    "network.rtt_ms": rtt,
                    "workload.tool_calls_per_rollout": count,
                    "connection.store": store,
                    "api.config_cache": config_cache,
                    "inference.decode_tps": rate,
                    "connection.ws_drops_per_hour": rtt / 4,
                    "connection.ws_lifetime_s": 20.0 if store else 3600.0,
                    "client.keepalive_idle_s": 0.05 if config_cache else 5.0,
                    "api.intermediate_hops": 0 if store else 2,
                },
            )
        )
    return points


@pytest.fixture
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if a batch falls back to point-by-point evaluation."""

    def refuse(scenario: Scenario, transport: Transport) -> None:
        raise AssertionError("the vectorized batch fell back to point by point")

    monkeypatch.setattr(vectorized, "expect", refuse)


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize("transport", list(Transport))
def test_many_points_at_once_equal_point_by_point(transport: Transport) -> None:
    points = varied_points()
    for found, scenario in zip(expect_many(points, transport), points, strict=True):
        assert_equal(found, expect(scenario, transport))


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
        "client.keepalive_idle_s": st.floats(0.01, 10.0),
        "inference.prefix_cache_hit_fraction": st.floats(0.0, 1.0),
    }
)


@pytest.mark.usefixtures("no_fallback")
@settings(max_examples=25, derandomize=True, deadline=None)
@given(points=st.lists(POINT, min_size=1, max_size=6), transport=st.sampled_from(list(Transport)))
def test_any_mix_of_valid_points_equals_point_by_point(
    points: list[dict[str, Any]], transport: Transport
) -> None:
    base = raw_scenario("codex-spark")
    scenarios = [point_scenario(base, assignments) for assignments in points]
    for found, scenario in zip(expect_many(scenarios, transport), scenarios, strict=True):
        assert_equal(found, expect(scenario, transport))


@pytest.mark.usefixtures("no_fallback")
@pytest.mark.parametrize("preset", CORE_PRESETS)
def test_every_core_preset_is_reproduced(preset: str) -> None:
    scenario = point_scenario(raw_scenario(preset), {})
    for transport in Transport:
        (found,) = expect_many([scenario], transport)
        assert_equal(found, expect(scenario, transport))


@pytest.mark.usefixtures("no_fallback")
def test_the_results_keep_the_order_of_the_points() -> None:
    base = raw_scenario("codex-spark")
    points = [
        point_scenario(base, {"workload.tool_calls_per_rollout": calls, "network.rtt_ms": rtt})
        for calls, rtt in [(30, 1.0), (5, 2.0), (30, 3.0), (5, 4.0)]
    ]
    found = expect_many(points, Transport.WS)
    for result, scenario in zip(found, points, strict=True):
        assert_equal(result, expect(scenario, Transport.WS))


def test_a_batch_that_cannot_be_stacked_falls_back_to_point_by_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    points = varied_points()[:6]

    def refuse(*args: Any) -> None:
        raise TypeError("not stackable")

    monkeypatch.setattr(vectorized, "_expect_group", refuse)
    for found, scenario in zip(expect_many(points, Transport.HTTP), points, strict=True):
        assert_equal(found, expect(scenario, Transport.HTTP))


def test_a_failing_point_gets_its_error_and_the_others_their_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    points = varied_points()[:4]
    broken = points[2]

    def fragile(scenario: Scenario, transport: Transport) -> Expectation:
        if scenario is broken:
            raise FloatingPointError("boom")
        return analytic.expect(scenario, transport)

    monkeypatch.setattr(vectorized, "_expect_group", lambda *a: (_ for _ in ()).throw(TypeError()))
    monkeypatch.setattr(vectorized, "expect", fragile)
    found = expect_many(points, Transport.WS)
    assert isinstance(found[2], FloatingPointError)
    for index in (0, 1, 3):
        assert_equal(found[index], expect(points[index], Transport.WS))


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
            assert set(expected) <= set(row)
            for key, value in expected.items():
                if isinstance(value, float):
                    assert row[key] == pytest.approx(value, rel=RELATIVE), key
                else:
                    assert row[key] == value, key
            if transport is Transport.HTTP:
                assert "e2e_reduction" not in row
            else:
                reductions = compare(runs[Transport.HTTP], runs[transport]).to_json()
                assert row["e2e_reduction"] == pytest.approx(
                    reductions["e2e_reduction"], rel=RELATIVE
                )
                assert row["api_cpu_reduction"] == pytest.approx(
                    reductions["api_cpu_reduction"], rel=RELATIVE
                )
        assert group[0]["network.rtt_ms"] == task.assignments["network.rtt_ms"]
        assert group[0]["workload.tool_calls_per_rollout"] == task.assignments.get(
            "workload.tool_calls_per_rollout"
        )


def test_points_the_analytic_engine_refuses_become_error_rows() -> None:
    shared = context(axis_kinds={"load.agents": "int"})
    rows = run_chunk(shared, [Task(0, 1, {"load.agents": 2}), Task(1, 1, {"load.agents": 1})])
    assert [r["point"] for r in rows] == [0, 0, 0, 1, 1, 1]
    assert all("engine = 'analytic'" in r["error"] for r in rows[:3])
    assert all(r["error"] is None and r["e2e_s_mean"] > 0 for r in rows[3:])
