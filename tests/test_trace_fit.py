"""The fit: distributions chosen by maximum likelihood, and round trips from a known truth
(traces the simulator wrote, read back, fitted, simulated again)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.loading import load_scenario, raw_scenario, validate
from sim.analysis.run import Engine, Spec, execute
from sim.analysis.summary import summarize
from sim.report.otel import write_otlp
from sim.report.simulated_trace import turn_requests
from sim.traces.distribution_fit import fit_distribution
from sim.traces.fit import fit_scenario
from sim.traces.read import read_requests
from sim.turn.transports import Transport


def test_a_lognormal_sample_is_fitted_as_a_lognormal() -> None:
    values = np.random.default_rng(4).lognormal(np.log(0.3), 0.8, 4000)
    fitted = fit_distribution(values)
    assert fitted is not None and fitted.kind == "lognormal"
    assert fitted.table["median"] == pytest.approx(0.3, rel=0.05)
    assert fitted.table["sigma"] == pytest.approx(0.8, rel=0.05)
    assert fitted.ks_p_value is not None and fitted.ks_p_value > 0.01


def test_a_sample_no_kind_fits_becomes_an_empirical_distribution() -> None:
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(1.0, 0.05, 3000), rng.normal(5.0, 0.1, 3000)])
    fitted = fit_distribution(values)
    assert fitted is not None and fitted.kind == "empirical"
    mean = np.average(fitted.table["values"], weights=fitted.table["weights"])
    assert mean == pytest.approx(values.mean(), rel=0.01)


def test_too_few_values_are_not_fitted() -> None:
    assert fit_distribution(np.array([1.0, 2.0, 3.0])) is None


def simulate(scenario, transport: str, rollouts: int, seed: int):
    spec = Spec(f"{scenario.name}:{transport}", scenario.name, Transport(transport))
    return execute(
        spec, scenario.model_copy(update={"seed": seed}), Engine.DES, rollouts, keep_turns=True
    )


EIGHT_CALLS = {
    "extends": "codex-spark",
    "workload.tool_calls_per_rollout": 8,
    "workload.tools": [
        {
            "name": "run",
            "weight": 1.0,
            "time_s": {"kind": "lognormal", "median": 0.8, "sigma": 1.0},
            "output_tokens": {"kind": "lognormal", "median": 600.0, "sigma": 0.7},
        },
    ],
}


def truth_scenario(name: str):
    if name != "eight-calls":
        return load_scenario(name)
    data = raw_scenario("codex-spark")
    data["name"] = "eight-calls"
    data["workload"]["tool_calls_per_rollout"] = 8
    data["workload"]["tools"] = EIGHT_CALLS["workload.tools"]
    return validate(data)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "transport", "rollouts"),
    [
        ("codex-spark", "ws", 3000),
        ("codex-spark", "http", 3000),
        ("cline-multifile", "http", 4500),
        ("eight-calls", "http", 3000),
    ],
)
def test_round_trip_from_a_known_truth(
    tmp_path: Path, name: str, transport: str, rollouts: int
) -> None:
    truth = truth_scenario(name)
    recorded = simulate(truth, transport, rollouts, seed=11)
    path = tmp_path / "trace.otlp.jsonl"
    write_otlp(path, turn_requests(recorded.turn_records(), truth, transport, name))
    requests, _ = read_requests([path])
    fitted = fit_scenario(requests, path.name, "codex-spark", None, "fitted")
    assert fitted.transport == transport
    scenario = fitted.scenario

    truth_tools = {t.name: t.time_s for t in truth.workload.tools}
    for tool in scenario.workload.tools:
        median = float(np.median(tool.time_s.sample(np.random.default_rng(1), 200_000)))
        true_median = float(
            np.median(truth_tools[tool.name].sample(np.random.default_rng(2), 200_000))
        )
        assert median == pytest.approx(true_median, rel=0.05), tool.name

    effective = 1 / scenario.inference.decode_tps.mean_reciprocal()
    true_effective = 1 / truth.inference.decode_tps.mean_reciprocal()
    assert effective == pytest.approx(true_effective, rel=0.03)

    calls = scenario.workload.tool_calls_per_rollout.mean
    assert calls == pytest.approx(truth.workload.tool_calls_per_rollout.mean, rel=0.03)

    again = simulate(scenario, transport, rollouts, seed=12).records.e2e_s.mean()
    # The truth's mean is its expectation (the analytic engine): no sampling noise of its own.
    truth_spec = Spec(name, name, Transport(transport))
    true_e2e = summarize(execute(truth_spec, truth, Engine.ANALYTIC, 1)).e2e_s.mean
    assert again == pytest.approx(true_e2e, rel=0.03)
