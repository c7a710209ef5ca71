"""The dashboard's pure helpers: TOML in and out, knobs, fields, curves, rollout spans."""

from __future__ import annotations

import re

import numpy as np
import pytest

from benchmarks import dashboard_recompute
from models.errors import ScenarioError
from models.loading import load_scenario, preset_names
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.dashboard.data import (
    DEFAULT_TRANSPORTS,
    amdahl_frame,
    evaluate,
    rollout_frame,
    scaling_frame,
    simulate_one,
)
from sim.dashboard.fields import lookup, scenario_fields
from sim.dashboard.io import scenario_from_upload, scenario_toml
from sim.dashboard.knobs import DECODE, DECODE_MARKS_TPS, KNOBS, apply
from sim.dashboard.rescale import decode_tps, mean_tool_time_s, stated_decode_tps
from sim.turn.transports import Transport


def test_toml_round_trip_of_every_preset() -> None:
    for name in preset_names():
        scenario = load_scenario(name)
        text = scenario_toml(scenario)
        assert scenario_from_upload(f"{name}.toml", text.encode()) == scenario


def test_upload_rejects_binary_with_one_line() -> None:
    with pytest.raises(ScenarioError, match=r"^x\.toml: not UTF-8 text"):
        scenario_from_upload("x.toml", b"\xff\xfe\x00")


def test_generated_fields_cover_every_leaf_of_the_tree() -> None:
    dumped = load_scenario("codex-spark").model_dump(mode="json", by_alias=True)
    specs = scenario_fields()
    for name, value in dumped.items():
        if isinstance(value, dict):
            assert {s.name for s in specs if s.section == name} == set(value)
        else:
            assert name in {s.path for s in specs if s.section == "scenario"}
    for spec in specs:
        lookup(dumped, spec.path)


@pytest.mark.parametrize("tps", [30.0, 65.0, 1000.0, 5000.0])
def test_decode_knob_sets_the_stated_speed_and_keeps_bursts(tps: float) -> None:
    scenario = load_scenario("codex-spark")
    data = scenario.model_dump(mode="json", by_alias=True)
    _, moved = apply(data, scenario, DECODE, tps)
    assert stated_decode_tps(moved) == pytest.approx(tps, rel=1e-12)
    assert moved.inference.decode_tps.kind == scenario.inference.decode_tps.kind
    ratio = decode_tps(moved) / stated_decode_tps(moved)
    assert ratio == pytest.approx(decode_tps(scenario) / 1000.0, rel=1e-12), "bursts scaled too"


def test_tool_time_knob_keeps_the_mix() -> None:
    scenario = load_scenario("codex-spark")
    knob = next(k for k in KNOBS if k.key == "workload.tools.time_s")
    _, moved = apply(scenario.model_dump(mode="json", by_alias=True), scenario, knob, 1.0)
    assert mean_tool_time_s(moved) == pytest.approx(1.0)
    ratios = [
        b.time_s.mean / a.time_s.mean
        for a, b in zip(scenario.workload.tools, moved.workload.tools, strict=True)
    ]
    assert np.allclose(ratios, ratios[0])


def test_invalid_knob_result_raises_one_line() -> None:
    scenario = load_scenario("codex-spark")
    knob = next(k for k in KNOBS if k.key == "api.state_store_fixed_ms")
    with pytest.raises(ScenarioError):
        apply(scenario.model_dump(mode="json", by_alias=True), scenario, knob, -1.0)


def test_log_slider_positions_include_the_published_speeds() -> None:
    options = DECODE.options(1103.45)
    assert set(DECODE_MARKS_TPS) <= set(options)
    assert options[0] == 30.0 and options[-1] == 5000.0
    assert 1103.45 in options
    assert options == sorted(options)


def test_amdahl_curve_grows_with_decode_speed() -> None:
    curve = amdahl_frame(load_scenario("codex-spark"), DEFAULT_TRANSPORTS)
    at = dict(zip(curve["decode_tps"], curve["e2e_reduction"], strict=True))
    assert at[65.0] < at[1000.0] < at[4000.0]
    assert at[65.0] <= 0.12


def test_amdahl_curve_ignores_the_scenario_decode_speed() -> None:
    from sim.dashboard.rescale import with_decode_tps

    scenario = load_scenario("codex-spark")
    a = amdahl_frame(scenario, DEFAULT_TRANSPORTS)
    b = amdahl_frame(with_decode_tps(scenario, 77.0), DEFAULT_TRANSPORTS)
    assert np.allclose(a["e2e_reduction"], b["e2e_reduction"], rtol=1e-9)


def test_scaling_http_api_work_grows_faster_than_websocket() -> None:
    frame = scaling_frame(load_scenario("codex-spark"), DEFAULT_TRANSPORTS)
    http, ws = (frame[frame["transport"] == t]["api_cpu_s"].to_numpy() for t in ("http", "ws"))
    assert np.all(np.diff(np.log(http)) > np.diff(np.log(ws)))


def test_rollout_spans_tile_the_critical_path() -> None:
    scenario = load_scenario("codex-spark")
    frame = rollout_frame(scenario, DEFAULT_TRANSPORTS, rollout=3)
    for transport in DEFAULT_TRANSPORTS:
        records = simulate_one(scenario, transport, 3)
        spans = frame[frame["row"] == transport.value].sort_values(["turn", "order"])
        assert spans["duration_ms"].sum() / 1000 == pytest.approx(records.stage_s.sum())
        gaps = spans["start_s"].to_numpy()[1:] - spans["end_s"].to_numpy()[:-1]
        assert np.allclose(gaps, 0.0, atol=1e-9)
    overlapped = frame[frame["row"] == "ws: post (overlapped)"]
    ws = simulate_one(scenario, Transport.WS, 3)
    assert len(overlapped) == np.count_nonzero(ws.post_overlapped_s) == ws.turn_index.size
    assert set(overlapped["stage"]) == {Stage.POST.value}
    np.testing.assert_allclose(overlapped["duration_ms"] / 1000, ws.post_overlapped_s, rtol=1e-12)


def test_same_rollout_sees_the_same_tool_time_under_both_transports() -> None:
    scenario = load_scenario("codex-spark")
    http, ws = (simulate_one(scenario, t, 5) for t in DEFAULT_TRANSPORTS)
    tool = STAGES.index(Stage.TOOL)
    assert np.array_equal(http.stage_s[:, tool], ws.stage_s[:, tool])


def test_evaluate_compares_each_transport_with_the_first() -> None:
    scenario: Scenario = load_scenario("codex-spark")
    results = evaluate(scenario, list(Transport))
    assert results.baseline == "http"
    assert set(results.comparisons) == {"http-full", "ws", "ws-append"}


def test_the_recompute_benchmark_reports_its_ratio(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["dashboard_recompute", "--repeats", "1"])
    dashboard_recompute.main()
    out = capsys.readouterr().out
    assert re.search(r"analytic recompute, one knob +[\d.]+ ms += +\d+ x expect\(\)", out)
    assert "one-rollout timeline" in out
