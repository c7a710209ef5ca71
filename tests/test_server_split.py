"""The fit with the service's own timing split: a simulated trace that carries, per request,
what the WebSocket timing event would say (the API's and the classifiers' stages as the API
overhead, prefill and decode as the engine's time) gives back the simulated scenario's
prefill rate, inference overhead and API costs, each field's source naming the timing."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from models.loading import load_scenario
from models.stages import STAGE_COLUMN, STAGES, Group, Stage
from sim.analysis.run import Engine, Spec, execute
from sim.report.simulated_trace import turn_requests
from sim.traces.fit import fit_scenario
from sim.traces.table import Request
from sim.turn.transports import Transport

ROLLOUTS = 200
API_STAGES = [STAGE_COLUMN[s] for s in STAGES if s.group in (Group.API, Group.SAFETY)]


def timed_trace(scenario_name: str, transport: str) -> list[Request]:
    """The simulated rollouts as requests, each with the timing split of its own turn."""
    truth = load_scenario(scenario_name)
    spec = Spec(f"{scenario_name}:{transport}", scenario_name, Transport(transport))
    run = execute(spec, truth, Engine.DES, ROLLOUTS, keep_turns=True)
    turns = run.turn_records()
    by_turn = {
        (int(r), int(t)): row
        for row, (r, t) in enumerate(zip(turns.rollout, turns.turn_index, strict=True))
    }
    requests = []
    for rollout in turn_requests(turns, truth, transport, scenario_name):
        for request in rollout:
            number = int(request.rollout_id.rsplit("/", 1)[1])
            stage_s = turns.stage_s[by_turn[(number, request.request_index)]]
            prefill_s = stage_s[STAGE_COLUMN[Stage.PREFILL]]
            engine_s = prefill_s + stage_s[STAGE_COLUMN[Stage.DECODE]]
            requests.append(
                replace(
                    request,
                    server_api_overhead_ms=float(stage_s[API_STAGES].sum()) * 1e3,
                    server_engine_ms=float(engine_s) * 1e3,
                    server_engine_ttft_ms=float(prefill_s) * 1e3,
                )
            )
    return requests


@pytest.mark.slow
def test_the_timing_split_gives_back_the_inference_and_api_costs() -> None:
    truth = load_scenario("codex-spark")
    fit = fit_scenario(timed_trace("codex-spark", "ws"), "timed", "codex-spark", None)
    fitted = fit.scenario
    assert fitted.inference.prefill_tps == pytest.approx(truth.inference.prefill_tps, rel=1e-3)
    assert fitted.inference.overhead_ms == pytest.approx(truth.inference.overhead_ms, abs=0.01)
    # Decode rates come from the engine's own times: the same draws the truth made.
    fitted_rate = 1 / fitted.inference.decode_tps.mean_reciprocal()
    true_rate = 1 / truth.inference.decode_tps.mean_reciprocal()
    assert fitted_rate == pytest.approx(true_rate, rel=0.03)
    # The API's costs keep the preset's proportions, scaled to the reported API overhead:
    # the truth is the preset, so the factor is 1 less what the fitted workload differs by.
    factor = fitted.api.validate_fixed_ms / truth.api.validate_fixed_ms
    assert factor == pytest.approx(1.0, rel=0.03)
    assert fitted.safety.blocking_fixed_ms / truth.safety.blocking_fixed_ms == pytest.approx(factor)
    for field in ("api.validate_fixed_ms", "safety.blocking_fixed_ms"):
        assert "responses_duration_excl_engine_and_client_tool_time_ms" in fit.sources[field]
    for field in ("inference.prefill_tps", "inference.overhead_ms", "inference.decode_tps"):
        assert "engine_service" in fit.sources[field]
    assert "inference.prefill_tps" not in fit.assumed
    # The network takes what is left of the TTFT, exactly; the download what is left of the
    # e2e, down to the fastest rate tried (the fitted workload's means differ from the
    # sample's by a fraction of a percent, which a faster download cannot take back).
    calibration = fit.calibration
    assert np.isclose(calibration.model_ttft_s, calibration.target_ttft_s, rtol=1e-6)
    assert np.isclose(calibration.model_e2e_s, calibration.target_e2e_s, rtol=0.01)


@pytest.mark.slow
def test_without_the_split_the_fit_is_what_it_was() -> None:
    """The same trace without the timing fields: one factor for all the costs before the first
    token, set by the TTFT, as before the split was used."""
    plain = [
        replace(r, server_api_overhead_ms=None, server_engine_ms=None, server_engine_ttft_ms=None)
        for r in timed_trace("codex-spark", "ws")
    ]
    fit = fit_scenario(plain, "plain", "codex-spark", None)
    [before, after] = fit.calibration.steps
    assert ("api", "validate_fixed_ms") in before.fields and ("network", "rtt_ms") in before.fields
    assert before.matched.startswith("mean TTFT")
    assert after.fields == (("api", "post_fixed_ms"), ("api", "post_per_1k_tokens_ms"))
    assert "engine_service" not in fit.sources.get("inference.decode_tps", "")
