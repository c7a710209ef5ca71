"""One agent on the testbed, time-scaled codex-spark, each transport: what the official SDK
measured against the emulator beside what the simulation gives for the same seeded rollouts,
within the tolerances docs/testbed.md states.  Over loopback, as the page's tables were
measured: the scenario's own round trip on an emulated link is ``test_testbed_network``'s."""

from __future__ import annotations

import pytest
from support import scenario
from testbed_support import kept

from sim.testbed.network import LOOPBACK
from sim.testbed.results import Key, LiveResult
from sim.testbed.session import SINGLE_AGENT_TRANSPORTS, Request, run_testbed

pytestmark = [pytest.mark.live, pytest.mark.slow]

ROLLOUTS = 4
TIME_SCALE = 0.1
E2E_TOLERANCE = 0.05
TTFT_TOLERANCE = 0.10
REDUCTION_TOLERANCE_POINTS = 3.0


@pytest.fixture(scope="module")
def result() -> LiveResult:
    request = Request(
        "codex-spark",
        scenario("codex-spark"),
        SINGLE_AGENT_TRANSPORTS,
        ROLLOUTS,
        TIME_SCALE,
        network=LOOPBACK,
    )
    return kept(run_testbed(request))


@pytest.mark.parametrize("transport", ["http", "http-full", "ws"])
def test_measured_e2e_and_ttft_match_the_simulation(result: LiveResult, transport: str) -> None:
    entry = result.transports[transport]
    errors = entry.rel_errors
    assert abs(errors[Key.E2E_MEAN]) < E2E_TOLERANCE, (transport, errors, entry.to_json())
    assert abs(errors[Key.TTFT_MEAN]) < TTFT_TOLERANCE, (transport, errors, entry.to_json())
    assert entry.errors == 0
    assert entry.measured.connections_per_rollout == entry.simulated.connections_per_rollout


def test_the_measured_http_to_ws_reduction_matches_the_simulated_one(result: LiveResult) -> None:
    measured, simulated = result.reduction(Key.MEASURED), result.reduction(Key.SIMULATED)
    assert abs(measured - simulated) * 100 < REDUCTION_TOLERANCE_POINTS, (measured, simulated)
    assert measured > 0.25


def test_the_server_charged_the_stages_the_simulation_charges(result: LiveResult) -> None:
    """Per stage and rollout, the emulator's logged delays are the formulas' on the same draws."""
    for entry in result.transports.values():
        for stage in ("validate", "render", "safety", "prefill", "decode"):
            measured, simulated = entry.measured.budget_s[stage], entry.simulated.budget_s[stage]
            assert measured == pytest.approx(simulated, rel=1e-4), stage


def test_the_json_has_the_documented_keys(result: LiveResult) -> None:
    payload = result.to_json()
    assert set(payload) >= {"spec", "time_scale", "transports", "reduction"}
    for entry in payload["transports"].values():
        for side in ("measured", "simulated"):
            assert set(entry[side]["e2e_s"]) >= {"mean", "p95"}
            assert set(entry[side]["ttft_s"]) >= {"mean", "p95"}
            assert "connections_per_rollout" in entry[side]
        assert set(entry["rel_error"]) == {"e2e_mean", "ttft_mean", "e2e_p95"}
    assert set(payload["reduction"]) == {"measured", "simulated"}
