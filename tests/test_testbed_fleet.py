"""A fleet on the testbed: 200 agents on the SDK's async client share an emulated cell small
enough that queues form; measured beside the mean of the fleet simulation of the same load."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import scenario
from testbed_support import kept

from models.stages import POOLS
from sim.testbed.network import LOOPBACK
from sim.testbed.results import Key, LiveResult
from sim.testbed.session import DEFAULT_FLEET_TIME_SCALE, Request, run_testbed
from sim.turn.transports import Transport

pytestmark = [pytest.mark.live, pytest.mark.slow]

FLEET = str(Path(__file__).resolve().parents[1] / "docs" / "testbed-fleet.toml")
E2E_MEAN_TOLERANCE = 0.10
E2E_P95_TOLERANCE = 0.15
UTILIZATION_TOLERANCE_POINTS = 5.0


@pytest.fixture(scope="module")
def fleet() -> LiveResult:
    request = Request(
        "testbed-fleet:ws",
        scenario(FLEET),
        (Transport.WS,),
        0,
        DEFAULT_FLEET_TIME_SCALE,
        network=LOOPBACK,
    )
    return kept(run_testbed(request))


def test_the_fleet_queues_and_holds_its_connections_without_an_error(fleet: LiveResult) -> None:
    entry = fleet.transports["ws"]
    assert fleet.agents == 200
    assert entry.errors == 0
    assert entry.rollouts >= 150
    assert entry.peak_sockets >= 180
    measured = entry.measured
    assert measured.budget_s["queue"] > 0.3 * measured.e2e_mean_s, "queues form"


def test_measured_latency_matches_the_fleet_simulation(fleet: LiveResult) -> None:
    entry = fleet.transports["ws"]
    errors = entry.rel_errors
    assert abs(errors[Key.E2E_MEAN]) < E2E_MEAN_TOLERANCE, entry.to_json()
    assert abs(errors[Key.E2E_P95]) < E2E_P95_TOLERANCE, entry.to_json()


@pytest.mark.parametrize("pool", [p.value for p in POOLS])
def test_pool_utilization_matches_the_fleet_simulation(fleet: LiveResult, pool: str) -> None:
    entry = fleet.transports["ws"]
    measured, simulated = entry.measured.utilization[pool], entry.simulated.utilization[pool]
    assert abs(measured - simulated) * 100 < UTILIZATION_TOLERANCE_POINTS, (
        pool,
        measured,
        simulated,
    )
