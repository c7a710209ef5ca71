"""Connections on the testbed: a short WebSocket lifetime with ``store=false`` makes the SDK
recover from ``previous_response_not_found`` as often, and at the cost, the simulation says;
tool steps longer than the keep-alive idle timeout make the SDK open new connections as
often as the simulation says."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import scenario
from testbed_support import kept

from sim.testbed.network import LOOPBACK
from sim.testbed.results import LiveResult
from sim.testbed.session import Request, run_testbed
from sim.turn.transports import Transport

pytestmark = [pytest.mark.live, pytest.mark.slow]

ROLLOUTS = 6
TIME_SCALE = 0.25
RECOVERY_TIME_SCALE = 0.5
"""Slower for the recoveries: a recovery's client work (the SDK rebuilding the whole input)
is CPU time that a loaded machine stretches, and at 0.25 it is a larger share of the
scaled cost (measured +5.4% beside two busy cores at 0.25, +1.5% at 0.5)."""
SHORT_ROLLOUTS = "workload.tool_calls_per_rollout=10"
RECOVERY_COST_TOLERANCE = 0.10


@pytest.fixture(scope="module")
def cache_loss() -> LiveResult:
    lossy = scenario(
        "codex-spark",
        SHORT_ROLLOUTS,
        "connection.ws_lifetime_s=1.5",
        "connection.ws_drops_per_hour=0",
        "connection.store=false",
    )
    request = Request(
        "cache-loss", lossy, (Transport.WS,), ROLLOUTS, RECOVERY_TIME_SCALE, network=LOOPBACK
    )
    return kept(run_testbed(request))


@pytest.fixture(scope="module")
def keep_alive() -> LiveResult:
    idle = scenario("codex-spark", SHORT_ROLLOUTS, "client.keepalive_idle_s=0.5")
    return kept(
        run_testbed(
            Request("keep-alive", idle, (Transport.HTTP,), ROLLOUTS, TIME_SCALE, network=LOOPBACK)
        )
    )


def test_cache_misses_per_rollout_match_the_simulation_within_its_ci(
    cache_loss: LiveResult,
) -> None:
    entry = cache_loss.transports["ws"]
    measured, simulated = entry.measured, entry.simulated
    assert simulated.cache_misses_per_rollout >= 1.0, "the lifetime is short enough to rotate"
    # The simulated expectation's 95% CI: the rollouts' rotations vary with their length.
    half_width = 1.96 * math.sqrt(max(simulated.cache_misses_per_rollout, 1.0) / ROLLOUTS)
    difference = measured.cache_misses_per_rollout - simulated.cache_misses_per_rollout
    assert abs(difference) <= half_width, entry.to_json()
    assert measured.connections_per_rollout == pytest.approx(
        simulated.connections_per_rollout, abs=half_width
    )


def test_the_cost_of_a_recovery_matches_the_simulation(cache_loss: LiveResult) -> None:
    entry = cache_loss.transports["ws"]
    measured, simulated = entry.measured.recovery_s, entry.simulated.recovery_s
    assert np.isfinite(measured) and np.isfinite(simulated)
    assert abs(measured / simulated - 1) < RECOVERY_COST_TOLERANCE, entry.to_json()


def test_a_tool_step_longer_than_the_idle_timeout_opens_a_new_connection(
    keep_alive: LiveResult,
) -> None:
    entry = keep_alive.transports["http"]
    measured, simulated = entry.measured, entry.simulated
    assert simulated.connections_per_rollout > 1.2, "some tool steps outlast the idle timeout"
    assert measured.connections_per_rollout == pytest.approx(
        simulated.connections_per_rollout, abs=0.5
    ), entry.to_json()
