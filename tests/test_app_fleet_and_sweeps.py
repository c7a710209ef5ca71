"""The dashboard's load, capacity and sweep-explorer views, driven headless with AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import (
    APP,
    TIMEOUT_S,
    assert_clean,
    button,
    shown,
)
from streamlit.testing.v1 import AppTest

from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep


def test_fleet_preset_starts_with_a_note_and_single_agent_views(app: AppTest) -> None:
    app.selectbox(key="preset").set_value("codex-spark-fleet").run()
    assert_clean(app)
    assert any("one agent without contention" in block.value for block in app.info)
    single = shown(app)
    app.selectbox(key="preset").set_value("codex-spark").run()
    assert shown(app) == single


def load_charts(app: AppTest) -> list[str]:
    """The specs of the load view's two charts (latency, utilization), as JSON text."""
    specs = [chart.proto.spec for chart in app.get("vega_lite_chart")]
    return [spec for spec in specs if "concurrent agents" in spec]


SIMULATED_LINE = '"point": true'
"""The mark of the simulated points on the latency chart (the model's line has none)."""


def test_the_load_view_draws_the_model_then_simulates_and_finds_a_capacity(app: AppTest) -> None:
    """The analytic curves are there before any button; the DES adds its points to the
    same two charts; the capacity search answers within the bound it was given."""
    for field, value in (("duration_s", 20.0), ("warmup_s", 5.0), ("replications", 2)):
        app.number_input(key=f"field:load.{field}").set_value(value)
    app.run()
    app.text_input(key="load:agents").set_value("2, 4").run()
    latency, _ = load_charts(app)
    assert "analytic mean" in latency and SIMULATED_LINE not in latency
    assert any("Analytic estimate: http" in caption.value for caption in app.caption)
    button(app, "Simulate the fleet").click().run()
    assert_clean(app)
    latency, _ = load_charts(app)
    assert SIMULATED_LINE in latency
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
