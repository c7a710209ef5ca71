"""The real engine behind the testbed: a profile measured here, then a live run on the model
predicted from that profile and the client's calibration alone (never refitted on the
rollouts it is compared with).  A shortened docs/testbed-real.toml (4 turns) keeps the test
to a few minutes on idle cores.  The bounds hold on the shared machine at a load average of
4-12, where the model's share of a core moved by half within minutes (docs/testbed.md: the
spread of four runs, worst e2e error 58%, TTFT 60%, http-full -> ws 17 points); they check
the prediction's range and the engine's behaviour, not the 8% an idle machine is meant for.
The http -> ws reduction is not asserted: the model puts it near 0.4% on this decode-bound
model, far inside that noise."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import scenario
from testbed_support import kept

from sim.testbed.network import LOOPBACK
from sim.testbed.results import Key, LiveResult
from sim.testbed.session import SINGLE_AGENT_TRANSPORTS, Request, run_testbed

pytestmark = [pytest.mark.live, pytest.mark.slow]
pytest.importorskip("llama_cpp", reason="the real engine: make engine")

SPEC = str(Path(__file__).resolve().parents[1] / "docs" / "testbed-real.toml")
SHORT = ("workload.tool_calls_per_rollout=3",)
ROLLOUTS = 1
E2E_TOLERANCE = 0.8
TTFT_TOLERANCE = 0.8
FULL_REDUCTION_TOLERANCE_POINTS = 30.0


@pytest.fixture(scope="module")
def result() -> LiveResult:
    from sim.testbed.profiling.measure import QUICK, profile

    short = scenario(SPEC, *SHORT)
    profiled = profile(short, QUICK, spec=SPEC).apply(short)
    request = Request(
        SPEC, profiled, SINGLE_AGENT_TRANSPORTS, ROLLOUTS, 1.0, network=LOOPBACK, engine="real"
    )
    return kept(run_testbed(request))


@pytest.mark.parametrize("transport", ["http", "http-full", "ws"])
def test_the_profile_predicts_e2e_and_ttft(result: LiveResult, transport: str) -> None:
    entry = result.transports[transport]
    errors = entry.rel_errors
    assert abs(errors[Key.E2E_MEAN]) < E2E_TOLERANCE, (transport, errors, entry.to_json())
    assert abs(errors[Key.TTFT_MEAN]) < TTFT_TOLERANCE, (transport, errors, entry.to_json())
    assert entry.errors == 0


def test_the_profile_predicts_what_ws_saves_against_http_full(result: LiveResult) -> None:
    measured = result.reduction(Key.MEASURED, "http-full")
    predicted = result.reduction(Key.SIMULATED, "http-full")
    assert abs(measured - predicted) * 100 < FULL_REDUCTION_TOLERANCE_POINTS, (measured, predicted)
    assert measured > 0.3


def test_prefill_and_decode_ran_on_the_model(result: LiveResult) -> None:
    """The server's prefill and decode are what the model took, not the formulas' values: a
    stateless request (http-full) prefills the whole history again, and costs more."""
    full, ws = result.transports["http-full"], result.transports["ws"]
    assert full.measured.budget_s["prefill"] > 2 * ws.measured.budget_s["prefill"]
    for entry in result.transports.values():
        for stage in ("prefill", "decode"):
            measured, predicted = entry.measured.budget_s[stage], entry.simulated.budget_s[stage]
            assert measured != pytest.approx(predicted, rel=1e-6), stage
    assert result.engine == "real"
