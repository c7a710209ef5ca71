"""The dashboard, driven headless with Streamlit's AppTest, and its pure helpers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from benchmarks import dashboard_recompute
from models.errors import ScenarioError
from models.loading import load_scenario, preset_names, raw_scenario, validate
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analytic import expect
from sim.dashboard_data import (
    DEFAULT_TRANSPORTS,
    amdahl_frame,
    evaluate,
    growth_exponents,
    rollout_frame,
    scaling_frame,
    simulate_one,
)
from sim.dashboard_fields import lookup, scenario_fields
from sim.dashboard_io import scenario_from_upload, scenario_toml
from sim.dashboard_knobs import (
    COVERED_PATHS,
    DECODE,
    DECODE_MARKS_TPS,
    HARDWARE,
    KNOBS,
    Control,
    Knob,
    apply,
    decode_tps,
    mean_tool_time_s,
)
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep
from sim.transports import Transport

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT_S = 60


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The dashboard after its first run, on the default preset, in an empty directory
    (so no local sweep results show up)."""
    monkeypatch.chdir(tmp_path)
    return AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()


def shown(at: AppTest) -> dict[str, str]:
    """The big numbers on the page: metric label -> value."""
    return {metric.label: metric.value for metric in at.metric}


def budget_table(at: AppTest) -> Any:
    """The budget table (seconds and share per stage and transport) as a DataFrame."""
    return at.dataframe[0].value


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# ---------------------------------------------------------------- the page


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
        assert not _same_row(before, after, stage), f"{key} did not change {stage.value}"


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
    assert not _same_row(before, budget_table(app), Stage.CLIENT_BUILD)


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


# ---------------------------------------------------------------- load and sweeps


def test_fleet_preset_starts_with_a_note_and_single_agent_views(app: AppTest) -> None:
    app.selectbox(key="preset").set_value("codex-spark-fleet").run()
    assert_clean(app)
    assert any("one agent without contention" in block.value for block in app.info)
    single = shown(app)
    app.selectbox(key="preset").set_value("codex-spark").run()
    assert shown(app) == single


def test_the_load_view_simulates_the_fleet_and_finds_a_capacity(app: AppTest) -> None:
    for field, value in (("duration_s", 20.0), ("warmup_s", 5.0), ("replications", 2)):
        app.number_input(key=f"field:load.{field}").set_value(value)
    app.run()
    charts_before = len(app.get("vega_lite_chart"))
    app.text_input(key="load:agents").set_value("2, 4").run()
    button(app, "Simulate the fleet").click().run()
    assert_clean(app)
    assert len(app.get("vega_lite_chart")) == charts_before + 2
    app.number_input(key="capacity:max_agents").set_value(8).run()
    button(app, "Find the capacity").click().run()
    assert_clean(app)
    capacity = {m.label: m.value for m in app.metric if m.label.endswith("<= 1 s")}
    assert set(capacity) == {f"{t}: agents meeting ttft_p95_s <= 1 s" for t in ("http", "ws")}
    assert all(1 <= int(value.replace(",", "")) <= 8 for value in capacity.values())


def test_a_bad_agent_list_is_one_line(app: AppTest) -> None:
    app.text_input(key="load:agents").set_value("10, lots").run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        "agents = '10, lots': expected a comma-separated list of integers >= 1"
    ]


GRID = """
name = "grid"
description = "reduction over decode speed and tool calls"
base = "codex-spark"
transports = ["http", "ws"]

[[axes]]
path = "inference.decode_tps"
values = [65.0, 1000.0, 4000.0]
scale = "log"

[[axes]]
path = "workload.tool_calls_per_rollout"
values = [5, 20, 40]
"""


@pytest.fixture
def sweep_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory whose results/ holds one small analytic sweep."""
    source = tmp_path / "grid.toml"
    source.write_text(GRID)
    run_sweep(load_sweep(source), tmp_path / "results" / "grid", workers=0)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_sweep_explorer_plots_a_results_directory(sweep_root: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    assert_clean(at)
    assert at.selectbox(key="sweep:directory").value == "results/grid"
    assert at.select_slider(key="where:workload.tool_calls_per_rollout").value == 5
    images = len(at.get("image"))
    assert images >= 1
    at.selectbox(key="sweep:kind").set_value("heat map").run()
    at.selectbox(key="sweep:hue").set_value("workload.tool_calls_per_rollout").run()
    assert_clean(at)
    assert len(at.get("image")) == images


def test_the_sweep_explorer_reads_an_uploaded_parquet_file(sweep_root: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    at.radio(key="sweep:source").set_value("a Parquet file").run()
    part = next((sweep_root / "results" / "grid" / "parts").iterdir())
    at.file_uploader(key="sweep:upload").set_value(
        (part.name, part.read_bytes(), "application/octet-stream")
    ).run()
    assert_clean(at)
    assert at.get("image")
    at.file_uploader(key="sweep:upload").set_value(("x.parquet", b"not parquet", "x")).run()
    assert not at.exception
    assert at.error[0].value.startswith("x.parquet: not a Parquet file of sweep rows")


def test_no_results_directory_is_a_hint_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    assert_clean(at)
    assert any("No sweep results under results/" in block.value for block in at.info)


# ---------------------------------------------------------------- upload


BAD_FIELD = b'extends = "codex-spark"\n[network]\nrtt_ms = -5\n'


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    return at.file_uploader(key="upload").set_value((name, content, "application/toml")).run()


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


# ---------------------------------------------------------------- helpers


def button(at: AppTest, label: str) -> Any:
    return next(b for b in at.button if b.label == label)


def widget(at: AppTest, knob: Knob) -> Any:
    key = f"knob:{knob.key}"
    if knob.control is Control.LOG_SLIDER:
        return at.select_slider(key=key)
    if knob.control is Control.TOGGLE:
        return at.toggle(key=key)
    return at.slider(key=key)


def _same_row(before: Any, after: Any, stage: Stage) -> bool:
    def row(table: Any) -> Any:
        seconds = [column for column in table.columns if column.endswith("(s)")]
        rows = table.loc[table.index == stage.label, seconds]
        return rows.to_numpy() if len(rows) else np.zeros(0)

    a, b = row(before), row(after)
    return a.shape == b.shape and np.array_equal(a, b)


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
def test_decode_knob_sets_the_effective_speed_and_keeps_bursts(tps: float) -> None:
    scenario = load_scenario("codex-spark")
    data = scenario.model_dump(mode="json", by_alias=True)
    _, moved = apply(data, scenario, DECODE, tps)
    assert decode_tps(moved) == pytest.approx(tps, rel=1e-12)
    assert moved.inference.decode_tps.kind == scenario.inference.decode_tps.kind


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
    from sim.dashboard_knobs import with_decode_tps

    scenario = load_scenario("codex-spark")
    a = amdahl_frame(scenario, DEFAULT_TRANSPORTS)
    b = amdahl_frame(with_decode_tps(scenario, 77.0), DEFAULT_TRANSPORTS)
    assert np.allclose(a["e2e_reduction"], b["e2e_reduction"], rtol=1e-9)


def test_scaling_http_api_work_grows_faster_than_websocket() -> None:
    frame = scaling_frame(load_scenario("codex-spark"), DEFAULT_TRANSPORTS)
    slopes = growth_exponents(frame, "api_cpu_s")
    assert slopes["http"] > 1.5
    assert slopes["ws"] < 1.2


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
    assert len(overlapped) > 0
    assert set(overlapped["stage"]) == {Stage.POST.value}


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
