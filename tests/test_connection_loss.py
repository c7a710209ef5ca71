"""Connection rotation and drops over the distribution of turn durations.

``test_the_lifetime_and_drop_sweep_lies_within_the_des_confidence_intervals``
runs a coarse version of the sweep: ``connection.ws_lifetime_s`` from 5 to
3,600 s and ``connection.ws_drops_per_hour`` from 0 to 120 on codex-spark:ws,
plus one store=false point, with 30 tool calls per rollout (a fixed turn count
keeps the turn-count draw, which dominates the
spread of e2e, out of what is compared).  The DES runs ``ROLLOUTS`` = 8,000
rollouts per point at the preset seed (about 0.6 s each): the 95% CI of e2e is
then about +-0.5% and of connections per rollout about +-0.01, tight enough to
see the old expected-duration engine's errors (2.000 connections against
1.43 at a 13 s lifetime) and affordable.  The analytic e2e mean and
connections per rollout must lie inside both CIs at every point.

The chain itself (closed form and grid) is checked against a Monte Carlo of
the model it solves (the same request times, drawn decode and tool times),
which isolates the implementation from the model's approximations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats
from support import scenario

from models.scenario import Scenario
from sim.analysis.stats import mean_ci95
from sim.analytic.agent import connection_loss
from sim.analytic.agent import engine as analytic
from sim.analytic.agent.engine import expect
from sim.analytic.agent.expectations import Approximation
from sim.des.runners import simulate
from sim.turn.transports import Transport

ROLLOUTS = 8000
CALLS = "workload.tool_calls_per_rollout=30"
SWEEP = [
    (5, 0, True),
    (12, 0, True),
    (13, 0, True),
    (30, 60, True),
    (120, 120, True),
    (3600, 0, True),
    (3600, 120, True),
    (8, 30, False),
]
"""(lifetime s, drops per hour, store)."""


def swept(lifetime_s: float, drops_per_hour: float, store: bool) -> Scenario:
    return scenario(
        "codex-spark",
        CALLS,
        f"connection.ws_lifetime_s={lifetime_s}",
        f"connection.ws_drops_per_hour={drops_per_hour}",
        f"connection.store={str(store).lower()}",
    )


@pytest.mark.parametrize(("lifetime_s", "drops_per_hour", "store"), SWEEP)
def test_the_lifetime_and_drop_sweep_lies_within_the_des_confidence_intervals(
    lifetime_s: float, drops_per_hour: float, store: bool
) -> None:
    s = swept(lifetime_s, drops_per_hour, store)
    records = simulate(s, Transport.WS, ROLLOUTS)
    expected = expect(s, Transport.WS)
    low, high = mean_ci95(records.e2e_s)
    assert low <= expected.e2e_s <= high, (records.e2e_s.mean(), expected.e2e_s)
    low, high = mean_ci95(records.cold_turns)
    assert low <= expected.cold_turns <= high, (records.cold_turns.mean(), expected.cold_turns)


def test_without_drops_and_rotation_a_rollout_keeps_its_one_connection_exactly() -> None:
    expected = expect(swept(3600, 0, True), Transport.WS)
    assert expected.cold_turns == 1.0
    assert expected.approximations == ()


def test_which_method_applies_and_is_reported() -> None:
    assert expect(swept(3600, 120, True), Transport.WS).approximations == (
        Approximation.CONNECTION_LOSS,
    )
    assert expect(swept(12, 0, True), Transport.WS).approximations == (
        Approximation.CONNECTION_LOSS,
        Approximation.ROTATION_GRID,
    )
    assert expect(swept(12, 0, True), Transport.HTTP).approximations == ()


def test_keep_alive_expiry_is_the_tool_mix_tail() -> None:
    """Over HTTP turn k >= 1 is cold when the previous tool outlasts the 5 s keep-alive:
    only run_tests (6.25% of calls, lognormal median 1.5 s, sigma 0.8) does, in 6.6% of calls."""
    s = scenario("codex-spark", CALLS)
    p_expired = 0.06 / 0.96 * stats.lognorm(s=0.8, scale=1.5).sf(5.0)
    others = [(0.01, 0.5), (0.08, 0.6), (0.05, 0.4)]
    assert max(stats.lognorm(s=sigma, scale=median).sf(5.0) for median, sigma in others) < 1e-10
    assert expect(s, Transport.HTTP).cold_turns == pytest.approx(1 + 30 * p_expired, rel=1e-6)


def test_the_grid_agrees_with_the_closed_form_where_both_apply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At a 300 s lifetime rotation is out of reach: forcing the grid must not move the result."""
    s = swept(300, 120, False)
    closed = expect(s, Transport.WS)
    assert Approximation.ROTATION_GRID not in closed.approximations
    monkeypatch.setattr(connection_loss, "ROTATION_BOUND", -1.0)
    grid = expect(s, Transport.WS)
    assert Approximation.ROTATION_GRID in grid.approximations
    assert grid.cold_turns == pytest.approx(closed.cold_turns, rel=2e-4)
    assert grid.e2e_s == pytest.approx(closed.e2e_s, rel=2e-6)


@pytest.mark.parametrize(("lifetime_s", "drops_per_hour"), [(12, 0), (3600, 120), (6, 120)])
def test_the_chain_solves_its_turn_duration_model(
    lifetime_s: float, drops_per_hour: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against 100,000 rollouts drawn from the same model: request times as the chain gets
    them, decode and tool times drawn, a drop time per connection."""
    seen: dict[str, Any] = {}
    chain = connection_loss.websocket

    def spy(columns: Any, draws: Any, count: Any, cold_s: np.ndarray, warm_s: np.ndarray) -> Any:
        seen.update(cold=cold_s[0], warm=warm_s[0])
        return chain(columns, draws, count, cold_s, warm_s)

    monkeypatch.setattr(analytic, "websocket", spy)
    s = swept(lifetime_s, drops_per_hour, True)
    found = expect(s, Transport.WS).cold_turns
    drawn = _connections(s, seen["cold"], seen["warm"], rollouts=100_000)
    half_width = 1.96 * drawn.std() / np.sqrt(drawn.size)
    assert abs(found - drawn.mean()) <= half_width + 1e-3 * found


def _connections(s: Scenario, cold_s: np.ndarray, warm_s: np.ndarray, rollouts: int) -> np.ndarray:
    rng = np.random.default_rng(20260204)
    w, c = s.workload, s.connection
    mean_drop_s = 3600 / c.ws_drops_per_hour if c.ws_drops_per_hour > 0 else np.inf

    def lifetime() -> np.ndarray:
        return np.minimum(c.ws_lifetime_s, rng.exponential(1.0, rollouts) * mean_drop_s)

    connections = np.ones(rollouts)
    age_s = np.zeros(rollouts)
    ends_s = lifetime()
    cold = np.ones(rollouts, dtype=bool)
    kinds = rng.choice(len(w.tools), size=(cold_s.size - 1, rollouts), p=w.tool_probabilities())
    for k in range(cold_s.size - 1):
        tool_s = np.zeros(rollouts)
        for index, tool in enumerate(w.tools):
            chosen = kinds[k] == index
            tool_s[chosen] = tool.time_s.sample(rng, int(chosen.sum()))
        decode_s = w.output_tokens.sample(rng, rollouts) / s.inference.decode_tps.sample(
            rng, rollouts
        )
        age_s = age_s + np.where(cold, cold_s[k], warm_s[k]) + decode_s + tool_s
        cold = age_s >= ends_s
        connections += cold
        ends_s = np.where(cold, lifetime(), ends_s)
        age_s = np.where(cold, 0.0, age_s)
    return connections


def test_the_doubling_scan_is_the_turn_by_turn_recursion() -> None:
    rng = np.random.default_rng(3)
    offset, slope = rng.random((5, 41)), rng.random((5, 41))
    expected = np.empty_like(offset)
    x = np.ones(5)
    for k in range(41):
        x = offset[:, k] + slope[:, k] * x
        expected[:, k] = x
    np.testing.assert_allclose(connection_loss.affine_scan(offset, slope), expected, rtol=1e-13)
    zeros = np.zeros((2, 30))
    assert np.array_equal(connection_loss.affine_scan(zeros, zeros), zeros), "no loss: exactly 0"
