"""The expected rollout: reach and last-turn probabilities, and the probe reduction.

The engine reads every per-turn cost at five probe turns and sums a rollout
from weighted sums over k (``sim.analytic.agent.layout``): exact because each cost of
turn k >= 1 is affine in k and in P(last).  Here that claim is checked against
the direct evaluation: every turn of the longest rollout laid out, its work
and stage costs computed, blended cold/warm and weighted by the probability of
reaching it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import scenario

from models.costs import stage_costs
from models.loading import raw_scenario
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analytic.agent import connection_loss
from sim.analytic.agent import engine as analytic
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect
from sim.analytic.agent.expected_draws import expected_draws
from sim.analytic.agent.layout import TurnCount, expected_turns, later_weights, total, turn_count
from sim.sweep.points import point_scenario
from sim.turn.transports import Transport, turn_work


def test_reach_and_last_follow_the_tool_call_distribution() -> None:
    calls = '{kind="empirical",values=[3,9,12],weights=[1,2,1]}'
    s = scenario("codex-spark", f"workload.tool_calls_per_rollout={calls}")
    count = turn_count(expected_draws(column_form([s])).tool_calls)
    reach, last = count.reach[0], count.last[0]
    assert reach.size == 13, "the longest rollout: 12 tool calls, 13 turns"
    np.testing.assert_allclose(reach, [1] * 4 + [0.75] * 6 + [0.25] * 3, rtol=1e-15)
    expected_last = np.zeros(13)
    expected_last[[3, 9, 12]] = [0.25, 0.5 / 0.75, 1.0]
    np.testing.assert_allclose(last, expected_last, rtol=1e-15)
    assert count.turns[0] == pytest.approx(1 + (3 + 2 * 9 + 12) / 4, rel=1e-15)


def direct(s: Scenario, transport: Transport, cold: np.ndarray) -> dict[str, Any]:
    """Every turn of the longest rollout evaluated on its own (the reference)."""
    columns = column_form([s])
    draws = expected_draws(columns)
    count = turn_count(draws.tool_calls)
    turns = expected_turns(columns, draws, count.index, count.last)
    costs = [stage_costs(columns, work) for work in turn_work(columns, transport, turns)]
    weight_cold, weight_warm = count.reach * cold, count.reach * (1 - cold)

    def rollout(cold_values: np.ndarray, warm_values: np.ndarray) -> float:
        per_turn = weight_cold * cold_values + weight_warm * warm_values
        return float(np.broadcast_to(per_turn, count.reach.shape).sum())

    stage_s = np.array([rollout(*(c.stage_s[stage] for c in costs)) for stage in STAGES])
    not_last = expected_turns(columns, draws, count.index, np.zeros(1))
    request = [stage_costs(columns, w) for w in turn_work(columns, transport, not_last)]
    without_decode = [c.request_s - c.stage_s[Stage.DECODE] for c in request]
    return {
        "stage_s": stage_s,
        "ttft_sum_s": rollout(*(c.ttft_s for c in costs)),
        "api_cpu_s": rollout(*(c.api_cpu_s for c in costs)),
        "safety_cpu_s": rollout(*(c.safety_cpu_s for c in costs)),
        "request_s": [np.broadcast_to(r, count.reach.shape)[0] for r in without_decode],
    }


def known_cold(s: Scenario, transport: Transport) -> np.ndarray:
    """Cold probabilities by hand: keep-alive expiry over HTTP, turn 0 only over WebSocket."""
    count = turn_count(expected_draws(column_form([s])).tool_calls)
    if transport.is_websocket:
        later = 0.0
    else:
        w = s.workload
        expired = [t.time_s.survival(s.client.keepalive_idle_s) for t in w.tools]
        later = float(w.tool_probabilities() @ expired)
    return np.where(count.index == 0, 1.0, later)[None, :]


CALLS = st.one_of(
    st.integers(0, 45),
    st.lists(st.integers(0, 45), min_size=1, max_size=4, unique=True).map(
        lambda values: {"kind": "empirical", "values": values, "weights": [1.0] * len(values)}
    ),
)


@settings(max_examples=30, derandomize=True, deadline=None)
@given(
    calls=CALLS,
    store=st.booleans(),
    config_cache=st.booleans(),
    hit=st.floats(0.0, 1.0),
    transport=st.sampled_from(list(Transport)),
)
def test_the_probe_reduction_equals_every_turn_evaluated(
    calls: Any, store: bool, config_cache: bool, hit: float, transport: Transport
) -> None:
    s = point_scenario(
        raw_scenario("codex-spark"),
        {
            "workload.tool_calls_per_rollout": calls,
            "connection.store": store,
            "api.config_cache": config_cache,
            "api.render_cache_hit_prob": hit,
            "connection.ws_drops_per_hour": 0.0,
        },
    )
    reference = direct(s, transport, known_cold(s, transport))
    found = expect(s, transport)
    np.testing.assert_allclose(found.stage_s, reference["stage_s"], rtol=1e-12, atol=1e-15)
    for name in ("ttft_sum_s", "api_cpu_s", "safety_cpu_s"):
        assert getattr(found, name) == pytest.approx(reference[name], rel=1e-12), name


@pytest.mark.parametrize("transport", [Transport.WS, Transport.WS_APPEND])
def test_the_request_times_the_connection_chain_sees_are_every_turns(
    transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chain's per-turn request times (affine in k from the probes) are the direct ones."""
    seen: dict[str, np.ndarray] = {}
    chain = connection_loss.websocket

    def spy(columns: Any, draws: Any, count: Any, cold_s: np.ndarray, warm_s: np.ndarray) -> Any:
        seen.update(cold=cold_s[0], warm=warm_s[0])
        return chain(columns, draws, count, cold_s, warm_s)

    monkeypatch.setattr(analytic, "websocket", spy)
    s = scenario("codex-spark", "connection.store=false")
    expect(s, transport)
    cold_s, warm_s = direct(s, transport, known_cold(s, transport))["request_s"]
    np.testing.assert_allclose(seen["cold"], cold_s, rtol=1e-12)
    np.testing.assert_allclose(seen["warm"], warm_s, rtol=1e-12)
    assert np.all(seen["cold"][1:] > seen["warm"][1:]), "a cold turn rebuilds the history"


def test_a_tool_call_count_of_probability_zero_changes_nothing() -> None:
    """A value never drawn past the longest rollout is never reached: no NaN, same budget."""
    zero_weight = 'workload.tool_calls_per_rollout={kind="empirical",values=[20,40],weights=[1,0]}'
    for transport in Transport:
        padded = expect(scenario("codex-spark", zero_weight), transport)
        plain = expect(scenario("codex-spark", "workload.tool_calls_per_rollout=20"), transport)
        assert np.array_equal(padded.stage_s, plain.stage_s)


def test_sums_over_turns_add_each_points_turns_in_order() -> None:
    rng = np.random.default_rng(11)
    for points, turns in ((1, 41), (2, 9), (300, 41), (7, 1)):
        values = rng.standard_normal((points, turns)) * 10.0 ** rng.uniform(-6, 6, (points, turns))
        values[0, :] = -0.0
        running = np.cumsum(values, axis=1)[:, -1]
        summed = total(values)
        assert np.array_equal(summed, running) and np.array_equal(
            np.signbit(summed), np.signbit(running)
        )


def test_the_later_weights_are_the_reach_weighted_sums_over_turns_after_the_first() -> None:
    rng = np.random.default_rng(12)
    for points in (1, 2, 50):
        count = TurnCount(reach=rng.random((points, 23)), last=rng.random((points, 23)))
        cold = rng.random((points, 23))
        steps = np.maximum(count.index - 1, 0)
        got = later_weights(count, cold)
        for variant, share in enumerate((cold, 1.0 - cold)):
            weight = np.where(count.index >= 1, count.reach * share, 0.0)
            for term, factor in enumerate((1.0, steps, count.last)):
                running = np.cumsum(weight * factor, axis=1)[:, -1]
                assert np.array_equal(got[variant, term], running)
