"""The dashboard page driven headless with AppTest: start, knobs, fields, DES, upload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_support import (
    assert_clean,
    budget_table,
    button,
    same_row,
    shown,
    upload,
    widget,
)
from streamlit.testing.v1 import AppTest

from models.errors import ScenarioError
from models.loading import load_scenario, preset_names, raw_scenario, validate
from models.stages import Stage
from sim.dashboard.fields import scenario_fields
from sim.dashboard.knobs import (
    COVERED_PATHS,
    DECODE,
    HARDWARE,
    KNOBS,
    decode_tps,
)
from sim.engine.analytic import expect
from sim.engine.transports import Transport


@pytest.mark.parametrize("preset", preset_names())
def test_starts_on_every_preset(app: AppTest, preset: str) -> None:
    app.selectbox(key="preset").set_value(preset).run()
    assert_clean(app)
    assert any(preset in block.value for block in app.markdown)
    assert len(app.metric) == 3
    assert all(value.endswith("%") for value in shown(app).values())


def test_first_page_shows_the_headline_and_a_verdict(app: AppTest) -> None:
    assert_clean(app)
    e2e = float(shown(app)["end-to-end saved: ws vs http"].rstrip("%")) / 100
    expected = (
        1
        - expect(load_scenario("codex-spark"), Transport.WS).e2e_s
        / expect(load_scenario("codex-spark"), Transport.HTTP).e2e_s
    )
    assert e2e == pytest.approx(expected, abs=0.0005)
    assert any("faster end to end than http" in block.value for block in app.markdown)


def test_decode_speed_changes_the_shown_reduction(app: AppTest) -> None:
    before = shown(app)["end-to-end saved: ws vs http"]
    app.select_slider(key=f"knob:{DECODE.key}").set_value(65.0).run()
    assert_clean(app)
    after = shown(app)["end-to-end saved: ws vs http"]
    assert after != before
    assert float(after.rstrip("%")) < float(before.rstrip("%"))


KNOB_MOVES: dict[str, tuple[Any, tuple[Stage, ...]]] = {
    "inference.decode_tps": (200.0, (Stage.DECODE,)),
    "workload.tool_calls_per_rollout": (60, (Stage.RENDER, Stage.TOOL)),
    "workload.tools.time_s": (2.0, (Stage.TOOL,)),
    "network.rtt_ms": (150.0, (Stage.UPLOAD, Stage.DOWNLOAD)),
    "api.validate_per_item_ms": (2.0, (Stage.VALIDATE,)),
    "api.state_store_fixed_ms": (100.0, (Stage.STATE_LOAD,)),
    "api.render_per_1k_tokens_ms": (12.0, (Stage.RENDER,)),
    "api.post_fixed_ms": (80.0, (Stage.POST,)),
    "api.intermediate_hops": (2, (Stage.HOPS,)),
    "safety.blocking_per_1k_tokens_ms": (20.0, (Stage.SAFETY,)),
    "api.render_cache_hit_prob": (0.9, (Stage.RENDER,)),
    "api.config_cache": (False, (Stage.ROUTE,)),
    "connection.ws_lifetime_s": (0.1, (Stage.CONNECT,)),
    "connection.ws_drops_per_hour": (60.0, (Stage.CONNECT,)),
    "connection.store": (False, (Stage.RECOVER,)),
}


def test_every_main_knob_has_a_move() -> None:
    assert set(KNOB_MOVES) == {knob.key for knob in KNOBS}


@pytest.mark.parametrize("key", list(KNOB_MOVES))
def test_each_main_knob_changes_its_stages(app: AppTest, key: str) -> None:
    value, stages = KNOB_MOVES[key]
    before = budget_table(app)
    widget(app, next(k for k in KNOBS if k.key == key)).set_value(value).run()
    assert_clean(app)
    after = budget_table(app)
    for stage in stages:
        assert not same_row(before, after, stage), f"{key} did not change {stage.value}"


def test_hardware_switch_moves_the_decode_knob_with_it(app: AppTest) -> None:
    app.selectbox(key=f"knob:{HARDWARE.key}").set_value("gpu-flagship").run()
    assert_clean(app)
    flagship = load_scenario("gpt5-flagship")
    assert app.select_slider(key=f"knob:{DECODE.key}").value == pytest.approx(decode_tps(flagship))
    assert float(shown(app)["end-to-end saved: ws vs http"].rstrip("%")) < 15


def test_reset_restores_the_preset(app: AppTest) -> None:
    before = shown(app)
    app.slider(key="knob:network.rtt_ms").set_value(200.0).run()
    assert shown(app) != before
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
    assert not same_row(before, budget_table(app), Stage.CLIENT_BUILD)


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
    assert all("95% CI" in metric.proto.delta for metric in app.metric)
    assert any(caption.value.startswith("Simulated: 500 rollouts") for caption in app.caption)


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
