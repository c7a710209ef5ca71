"""The dashboard page driven headless with AppTest: the reductions it shows are the
analytic engine's (and, after a DES run, those of ``loopbudget compare``); each knob moves
its stages and the reduction the way the model says; fields, resets and uploads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_support import (
    assert_clean,
    budget_table,
    button,
    seconds,
    shown,
    table_reduction,
    upload,
    widget,
)
from streamlit.testing.v1 import AppTest

from models.errors import ScenarioError
from models.loading import load_scenario, preset_names, raw_scenario, validate
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analysis.run import Engine, execute, parse_spec
from sim.analysis.summary import compare
from sim.analytic.agent.engine import expect
from sim.dashboard.fields import scenario_fields
from sim.dashboard.knobs import COVERED_PATHS, DECODE, HARDWARE, KNOBS, apply
from sim.turn.transports import Transport

pytestmark = pytest.mark.slow

UP, DOWN = 1, -1
HTTP, WS = "http", "ws"


def reduction_shown(app: AppTest, metric: str = "end-to-end") -> float:
    return float(shown(app)[f"{metric} saved: ws vs http"].rstrip("%")) / 100


def analytic_reductions(scenario: Scenario) -> dict[str, float]:
    """The three headline reductions of ws over http from the analytic engine."""
    http, ws = (expect(scenario, t) for t in (Transport.HTTP, Transport.WS))
    return {
        "end-to-end": 1 - ws.e2e_s / http.e2e_s,
        "TTFT": 1 - ws.ttft_mean_s / http.ttft_mean_s,
        "API work": 1 - ws.api_cpu_s / http.api_cpu_s,
    }


@pytest.mark.parametrize("preset", preset_names())
def test_starts_on_every_preset_with_its_analytic_reductions(app: AppTest, preset: str) -> None:
    app.selectbox(key="preset").set_value(preset).run()
    assert_clean(app)
    assert any(preset in block.value for block in app.markdown)
    single_agent = load_scenario(preset, ["load.agents=1", "load.kind='closed'"])
    expected = analytic_reductions(single_agent)
    assert {label.split(" saved")[0] for label in shown(app)} == set(expected)
    for metric, value in expected.items():
        assert reduction_shown(app, metric) == pytest.approx(value, abs=0.0005), metric


def test_first_page_shows_the_verdict_on_the_largest_saving(app: AppTest) -> None:
    assert_clean(app)
    (verdict,) = [b.value for b in app.markdown if "faster end to end than http" in b.value]
    assert f"{reduction_shown(app):.1%} faster end to end" in verdict
    http, ws = (expect(load_scenario("codex-spark"), t) for t in (Transport.HTTP, Transport.WS))
    saved = http.stage_s - ws.stage_s
    biggest = STAGES[int(np.argmax(saved))]
    assert f"the biggest saving is in {biggest.phrase} ({saved.max():.2f} s per rollout)" in verdict


def test_the_decode_knob_shows_the_speed_the_preset_states(app: AppTest) -> None:
    """codex-spark's hardware states 1,000 tokens/s sustained with bursts (a constant 1,103
    tokens/s decodes as fast on average): the knob shows the 1,000."""
    assert app.select_slider(key=f"knob:{DECODE.key}").value == 1000.0
    assert DECODE.show(1000.0) == "1,000"


@pytest.mark.parametrize("tps, direction", [(65.0, DOWN), (4000.0, UP)])
def test_faster_decode_shows_a_larger_reduction(app: AppTest, tps: float, direction: int) -> None:
    """Amdahl: the seconds WebSocket mode saves are a larger share of a faster rollout."""
    before = reduction_shown(app)
    app.select_slider(key=f"knob:{DECODE.key}").set_value(tps).run()
    assert_clean(app)
    assert np.sign(reduction_shown(app) - before) == direction
    preset = load_scenario("codex-spark")
    _, moved_scenario = apply(preset.model_dump(mode="json", by_alias=True), preset, DECODE, tps)
    moved = analytic_reductions(moved_scenario)
    assert reduction_shown(app) == pytest.approx(moved["end-to-end"], abs=0.0005)


@dataclass(frozen=True)
class Move:
    """A knob set to ``value``: which stages move which way, and the e2e reduction's way."""

    value: Any
    stages: dict[tuple[Stage, str], int]
    reduction: int


def both(stage: Stage, direction: int = UP) -> dict[tuple[Stage, str], int]:
    return {(stage, HTTP): direction, (stage, WS): direction}


KNOB_MOVES: dict[str, Move] = {
    "inference.decode_tps": Move(200.0, both(Stage.DECODE), DOWN),
    "workload.tool_calls_per_rollout": Move(
        60, {**both(Stage.RENDER), **both(Stage.TOOL), **both(Stage.SAFETY)}, UP
    ),
    "workload.tools.time_s": Move(2.0, both(Stage.TOOL), DOWN),
    "network.rtt_ms": Move(150.0, {**both(Stage.UPLOAD), **both(Stage.DOWNLOAD)}, DOWN),
    "api.validate_per_item_ms": Move(2.0, both(Stage.VALIDATE), UP),
    "api.state_store_fixed_ms": Move(100.0, {(Stage.STATE_LOAD, HTTP): UP}, UP),
    "api.render_per_1k_tokens_ms": Move(12.0, both(Stage.RENDER), UP),
    "api.post_fixed_ms": Move(80.0, {(Stage.POST, HTTP): UP}, UP),
    "api.intermediate_hops": Move(2, both(Stage.HOPS), UP),
    "safety.blocking_per_1k_tokens_ms": Move(20.0, both(Stage.SAFETY), UP),
    "api.render_cache_hit_prob": Move(0.9, {(Stage.RENDER, HTTP): DOWN}, DOWN),
    "api.config_cache": Move(False, both(Stage.ROUTE), UP),
    "connection.ws_lifetime_s": Move(0.1, {(Stage.CONNECT, WS): UP, (Stage.SAFETY, WS): UP}, DOWN),
    "connection.ws_drops_per_hour": Move(60.0, {(Stage.CONNECT, WS): UP}, DOWN),
    "connection.store": Move(False, {(Stage.RECOVER, WS): UP, (Stage.STATE_LOAD, WS): DOWN}, 0),
}
"""Decode, tools and the round trip are paid by both transports and dilute the saving; the
API and safety costs of the whole history are what WebSocket mode removes; a lost
connection makes WebSocket mode pay them again. Without store, a lost cache costs a failed
attempt instead of a storage load, which at 0.5 drops per hour changes the reduction by
less than 0.1 points."""


def test_every_main_knob_has_a_move() -> None:
    assert set(KNOB_MOVES) == {knob.key for knob in KNOBS}


@pytest.mark.parametrize("key", list(KNOB_MOVES))
def test_each_main_knob_moves_its_stages_and_the_reduction_its_way(app: AppTest, key: str) -> None:
    move = KNOB_MOVES[key]
    before = budget_table(app)
    widget(app, next(k for k in KNOBS if k.key == key)).set_value(move.value).run()
    assert_clean(app)
    after = budget_table(app)
    for (stage, transport), direction in move.stages.items():
        change = seconds(after, stage, transport) - seconds(before, stage, transport)
        assert np.sign(change) == direction, f"{key}: {stage.value} over {transport} {change:+g}"
    change = table_reduction(after) - table_reduction(before)
    if move.reduction:
        assert np.sign(change) == move.reduction, f"{key}: reduction {change:+.4f}"
    else:
        assert abs(change) < 0.001
    assert reduction_shown(app) == pytest.approx(table_reduction(after), abs=0.0005)


def test_hardware_switch_moves_the_decode_knob_with_it(app: AppTest) -> None:
    app.selectbox(key=f"knob:{HARDWARE.key}").set_value("gpu-flagship").run()
    assert_clean(app)
    flagship = load_scenario("gpt5-flagship")
    assert app.select_slider(key=f"knob:{DECODE.key}").value == pytest.approx(64.0), (
        "gpu-flagship's stated median"
    )
    expected = analytic_reductions(flagship)["end-to-end"]
    assert reduction_shown(app) == pytest.approx(expected, abs=0.0005)
    assert reduction_shown(app) < analytic_reductions(load_scenario("codex-spark"))["end-to-end"]


def test_reset_restores_the_preset(app: AppTest) -> None:
    before = shown(app)
    app.slider(key="knob:network.rtt_ms").set_value(200.0).run()
    assert reduction_shown(app) < float(before["end-to-end saved: ws vs http"].rstrip("%")) / 100
    button(app, "Reset controls").click().run()
    assert shown(app) == before


def test_changing_preset_forgets_moved_knobs(app: AppTest) -> None:
    app.slider(key="knob:network.rtt_ms").set_value(200.0).run()
    app.selectbox(key="preset").set_value("gpt5-flagship").run()
    assert (
        app.slider(key="knob:network.rtt_ms").value == load_scenario("gpt5-flagship").network.rtt_ms
    )


def test_advanced_fields_are_generated_and_applied(app: AppTest) -> None:
    generated = {spec.path for spec in scenario_fields()} - COVERED_PATHS
    keys = {str(w.key) for w in app.sidebar.get("number_input")}
    keys |= {str(w.key) for w in app.sidebar.get("text_area")}
    keys |= {str(w.key) for w in app.sidebar.get("text_input")}
    keys |= {str(w.key) for w in app.sidebar.get("checkbox")}
    keys |= {str(w.key) for w in app.sidebar.get("selectbox")}
    assert {f"field:{path}" for path in generated} <= keys
    before = budget_table(app)
    app.number_input(key="field:client.build_per_item_ms").set_value(5.0).run()
    assert_clean(app)
    for transport in (HTTP, WS):
        build = (
            seconds(table, Stage.CLIENT_BUILD, transport) for table in (before, budget_table(app))
        )
        assert np.diff(list(build))[0] > 0, "a costlier item, a slower build"


def test_invalid_advanced_values_show_one_line_and_are_skipped(app: AppTest) -> None:
    before = shown(app)
    app.text_area(key="field:workload.output_tokens").set_value("{not json").run()
    assert not app.exception
    assert len(app.error) == 1
    assert app.error[0].value.startswith("workload.output_tokens = '{not json': invalid JSON")
    assert shown(app) == before
    app.text_area(key="field:workload.output_tokens").set_value('{"kind": "lognormal"}').run()
    assert not app.exception
    assert "workload.output_tokens" in app.error[0].value
    assert "\n" not in app.error[0].value


def test_the_des_button_produces_results_with_confidence_intervals(app: AppTest) -> None:
    assert not any("95% CI" in metric.proto.delta for metric in app.metric)
    button(app, "Simulate (DES)").click().run()
    assert_clean(app)
    assert any(caption.value.startswith("Simulated: 500 rollouts") for caption in app.caption)
    runs = [
        execute(parse_spec(f"codex-spark:{t}"), load_scenario("codex-spark"), Engine.DES, 500)
        for t in (HTTP, WS)
    ]
    e2e = compare(*runs).to_json()
    low, high = e2e["e2e_reduction_ci95"]
    (metric,) = [m for m in app.metric if m.label.startswith("end-to-end")]
    assert metric.value == f"{e2e['e2e_reduction']:.1%}", "the paired DES of `loopbudget compare`"
    assert metric.proto.delta.startswith(f"95% CI {low:.1%} to {high:.1%}")
    assert all("95% CI" in metric.proto.delta for metric in app.metric)


def test_every_transport_and_a_single_one(app: AppTest) -> None:
    app.multiselect(key="transports").set_value([t.value for t in Transport]).run()
    assert_clean(app)
    assert len(app.metric) == 3 * (len(Transport) - 1)
    app.multiselect(key="transports").set_value(["ws"]).run()
    assert_clean(app)
    assert not app.metric
    app.multiselect(key="transports").set_value([]).run()
    assert not app.exception


BAD_FIELD = b'extends = "codex-spark"\n[network]\nrtt_ms = -5\n'


def test_bad_upload_shows_the_cli_message_and_keeps_the_scenario(
    app: AppTest, tmp_path: Path
) -> None:
    app.selectbox(key="preset").set_value("gpt5-flagship").run()
    before = shown(app)
    upload(app, "bad.toml", BAD_FIELD)
    assert not app.exception
    path = tmp_path / "bad.toml"
    path.write_bytes(BAD_FIELD)
    with pytest.raises(ScenarioError) as cli:
        validate(raw_scenario(str(path)))
    assert [e.value for e in app.error] == [str(cli.value)]
    assert shown(app) == before
    assert any(c.value == "Loaded: preset gpt5-flagship" for c in app.caption)


def test_unparsable_upload_names_the_file(app: AppTest) -> None:
    upload(app, "broken.toml", b"seed = \n")
    assert not app.exception
    assert app.error[0].value.startswith("broken.toml: invalid TOML:")


def test_good_upload_replaces_the_scenario(app: AppTest) -> None:
    content = b'extends = "codex-spark"\nname = "my-agent"\n[network]\nrtt_ms = 120.0\n'
    upload(app, "my-agent.toml", content)
    assert_clean(app)
    assert any("my-agent" in block.value for block in app.markdown)
    assert app.slider(key="knob:network.rtt_ms").value == 120.0
