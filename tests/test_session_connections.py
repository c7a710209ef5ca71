"""Connections kept across an agent's rollouts (``connection.reuse_across_rollouts``).

A single agent's block of ``BLOCK_ROLLOUTS`` rollouts is one session: its
rollouts run in order on one connection, ``load.think_time_s`` apart.  The
session's connections are counted against renewal theory: with a constant
lifetime L and no drops a session spanning T opens between
floor(T / (L + g)) + 1 and ceil(T / L) connections (g the longest gap between
two requests, by which a rotation may be noticed late); with drops only, the
drops are a Poisson process of rate lambda over the session.  The analytic
engine's stationary renewal (``sim.analytic.agent.session_connection``) is compared
with the DES within its 95% CI, for one agent and for a closed fleet.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import scenario

from models.scenario import Scenario
from sim.analysis.stats import mean_ci95
from sim.analytic.agent.engine import expect
from sim.analytic.agent.expectations import Approximation
from sim.des.runners import simulate, simulate_fleet
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.transports import Transport

ROLLOUTS = 8192
"""Eight sessions: the CI of connections per rollout is about +-0.008 at 0.15."""


def session(lifetime_s: float, drops_per_hour: float, think_mean_s: float = 5.0) -> Scenario:
    return scenario(
        "codex-spark",
        "connection.reuse_across_rollouts=true",
        f"connection.ws_lifetime_s={lifetime_s}",
        f"connection.ws_drops_per_hour={drops_per_hour}",
        f"load.think_time_s={{kind = 'exponential', mean = {think_mean_s}}}",
    )


def spans_and_connections(s: Scenario) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per session: its span (first request to last request), connections, longest gap."""
    turns = simulate(s, Transport.WS, ROLLOUTS, keep_turns=True).turn_records
    assert turns is not None
    sessions = turns.rollout // BLOCK_ROLLOUTS
    spans, counts, gaps = [], [], []
    for index in np.unique(sessions):
        mine = sessions == index
        starts = turns.start_at_s[mine]
        spans.append(starts[-1] - starts[0])
        counts.append(turns.cold[mine].sum())
        gaps.append(np.diff(starts).max())
    return np.array(spans), np.array(counts), np.array(gaps)


def test_a_constant_lifetime_without_drops_opens_about_ceil_t_over_l_connections() -> None:
    lifetime_s = 60.0
    spans, counts, gaps = spans_and_connections(session(lifetime_s, 0.0))
    assert np.all(counts <= np.ceil(spans / lifetime_s))
    assert np.all(counts >= np.floor(spans / (lifetime_s + gaps)) + 1)


def test_drops_alone_are_a_poisson_count_over_the_session() -> None:
    drops_per_s = 12.0 / 3600.0
    spans, counts, _ = spans_and_connections(session(86400.0, 12.0))
    expected = drops_per_s * spans.sum()
    drops = (counts - 1).sum()
    assert abs(drops - expected) <= 2.0 * math.sqrt(expected), (drops, expected)


def test_the_session_rotates_every_lifetime_not_every_rollout() -> None:
    records = simulate(session(60.0, 0.0), Transport.WS, BLOCK_ROLLOUTS)
    span_s = records.started_at_s[-1] + records.e2e_s[-1] - records.started_at_s[0]
    assert records.cold_turns.sum() == pytest.approx(span_s / 60.0, rel=0.05)
    assert records.cold_turns.mean() < 0.5


@pytest.mark.slow
@pytest.mark.parametrize(
    ("transport", "lifetime_s", "drops_per_hour", "think_mean_s"),
    [
        (Transport.WS, 120.0, 0.0, 5.0),
        (Transport.WS, 3600.0, 30.0, 5.0),
        (Transport.WS, 600.0, 6.0, 2.0),
        (Transport.WS, 60.0, 0.0, 2.0),
        (Transport.HTTP, 3600.0, 0.5, 5.0),
        (Transport.HTTP, 3600.0, 0.5, 2.0),
    ],
)
def test_connections_per_rollout_lie_within_the_des_confidence_interval(
    transport: Transport, lifetime_s: float, drops_per_hour: float, think_mean_s: float
) -> None:
    s = session(lifetime_s, drops_per_hour, think_mean_s)
    records = simulate(s, transport, ROLLOUTS)
    expected = expect(s, transport)
    low, high = mean_ci95(records.cold_turns)
    assert low <= expected.cold_turns <= high, (records.cold_turns.mean(), expected.cold_turns)
    exact_http = transport is Transport.HTTP
    assert (Approximation.SESSION_CONNECTION in expected.approximations) is not exact_http


def test_http_keep_alive_survives_the_think_time_with_its_survival_probability() -> None:
    s = session(3600.0, 0.0, think_mean_s=5.0)
    idle_s = s.client.keepalive_idle_s
    kept = expect(s, Transport.HTTP).cold_turns
    alone = expect(scenario("codex-spark"), Transport.HTTP).cold_turns
    assert alone - kept == pytest.approx(1.0 - math.exp(-idle_s / 5.0), rel=1e-12)


@pytest.mark.slow
def test_a_closed_fleet_keeps_each_agent_s_connection() -> None:
    s = scenario(
        "codex-spark",
        "connection.reuse_across_rollouts=true",
        "connection.ws_lifetime_s=120",
        "connection.ws_drops_per_hour=30",
        "load.agents=40",
        "load.duration_s=1200",
    )
    cold = np.concatenate([simulate_fleet(s, Transport.WS, r).records.cold_turns for r in range(2)])
    low, high = mean_ci95(cold)
    assert low <= expect(s, Transport.WS).cold_turns <= high, (cold.mean(), low, high)


def test_the_switch_off_keeps_one_connection_per_rollout() -> None:
    s = scenario("codex-spark", "connection.ws_drops_per_hour=0")
    records = simulate(s, Transport.WS, 64)
    assert np.all(records.cold_turns == 1.0)
    assert expect(s, Transport.WS).cold_turns == 1.0
