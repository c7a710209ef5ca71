"""The dashboard's load, capacity and sweep-explorer views, driven headless with AppTest:
more agents load the pools more, HTTP loads the classifiers most and so meets an SLO with
fewer agents, and the explorer's figures draw the rows of the sweep it reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import streamlit as st
from app_support import (
    APP,
    TIMEOUT_S,
    assert_clean,
    button,
    shown,
)
from matplotlib.figure import Figure
from plot_support import by_x, cells, lines, rows
from streamlit.testing.v1 import AppTest

from sim.dashboard import load_charts, sweeps
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep

pytestmark = pytest.mark.slow


def test_fleet_preset_starts_with_a_note_and_single_agent_views(app: AppTest) -> None:
    app.selectbox(key="preset").set_value("codex-spark-fleet").run()
    assert_clean(app)
    assert any("one agent without contention" in block.value for block in app.info)
    single = shown(app)
    app.selectbox(key="preset").set_value("codex-spark").run()
    assert shown(app) == single


@pytest.fixture
def drawn_frames(monkeypatch: pytest.MonkeyPatch) -> dict[str, pd.DataFrame]:
    """The data frames the load view hands to its two charts, by chart name."""
    frames: dict[str, pd.DataFrame] = {}
    for name in ("latency_charts", "utilization_charts"):
        original = getattr(load_charts, name)

        def keep(frame: pd.DataFrame, _name: str = name, _original=original):
            frames[_name] = frame
            return _original(frame)

        monkeypatch.setattr(load_charts, name, keep)
    return frames


def simulated(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["source"] == "simulation"]


def test_more_agents_load_the_pools_more_and_http_loads_the_classifiers_most(
    app: AppTest, drawn_frames: dict[str, pd.DataFrame]
) -> None:
    """One classifier worker for the whole cell, so that a handful of agents shows the
    bottleneck: HTTP classifies the whole history every turn, WebSocket the new input.
    The model's curves are drawn before any button; the simulation adds its points."""
    fields = (("duration_s", 20.0), ("warmup_s", 5.0), ("replications", 2))
    for field, value in fields:
        app.number_input(key=f"field:load.{field}").set_value(value)
    app.number_input(key="field:capacity.safety_workers").set_value(1)
    app.run()
    app.text_input(key="load:agents").set_value("2, 4").run()
    assert simulated(drawn_frames["latency_charts"]).empty
    model = drawn_frames["utilization_charts"]
    model = model[model["source"] == "analytic"].set_index(["transport", "pool", "agents"])
    assert len(model) > 0
    assert any("Analytic estimate: http" in caption.value for caption in app.caption)
    button(app, "Simulate the fleet").click().run()
    assert_clean(app)
    busy = simulated(drawn_frames["utilization_charts"]).set_index(["transport", "pool", "agents"])
    busy = busy["utilization"].unstack("agents")
    assert (busy[4] >= busy[2]).all() and (busy[4] > busy[2])[busy[2] > 0].all()
    # Classifier work per rollout, parallel classifiers included, is 5.63 s over HTTP and
    # 0.69 s over WebSocket, and an HTTP rollout lasts 21.7 s against 13.4 s: per second
    # an HTTP agent keeps the classifiers about 5 times as busy.
    for agents in (2, 4):
        assert busy.loc[("http", "safety"), agents] > 3 * busy.loc[("ws", "safety"), agents]
    latency = simulated(drawn_frames["latency_charts"])
    latency = latency.set_index(["transport", "statistic", "agents"])
    for agents in (2, 4):
        assert (
            latency.loc[("http", "mean", agents), "ttft_ms"]
            > latency.loc[("ws", "mean", agents), "ttft_ms"]
        )
    app.number_input(key="capacity:max_agents").set_value(8).run()
    next(n for n in app.number_input if n.label == "limit (s)").set_value(1.0).run()
    button(app, "Find the capacity").click().run()
    assert_clean(app)
    capacity = {
        m.label.split(":")[0]: (int(m.value.replace(",", "")), m.proto.delta)
        for m in app.metric
        if "agents meeting ttft_p95_s <= 1 s" in m.label
    }
    (http_agents, http_failing), (ws_agents, _) = capacity["http"], capacity["ws"]
    assert 1 <= http_agents < ws_agents == 8, "WebSocket mode serves more agents on the cell"
    assert http_failing == f"{http_agents + 1} do not"
    (ratio,) = [b.value for b in app.markdown if "serves" in b.value]
    assert f"ws serves {ws_agents / http_agents:.2f}x the agents of http" in ratio


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


@pytest.fixture
def sweep_figures(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """The figures the sweep explorer draws, in order (its PNG cache emptied first)."""
    figures: list[Figure] = []
    original = sweeps.png_bytes

    def keep(figure: Figure) -> bytes:
        figures.append(figure)
        return original(figure)

    monkeypatch.setattr(sweeps, "png_bytes", keep)
    st.cache_data.clear()
    return figures


DECODE, CALLS = "inference.decode_tps", "workload.tool_calls_per_rollout"


def test_the_sweep_explorer_draws_the_rows_of_a_results_directory(
    sweep_root: Path, sweep_figures: list[Figure]
) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    assert_clean(at)
    assert at.selectbox(key="sweep:directory").value == "results/grid"
    assert at.select_slider(key=f"where:{CALLS}").value == 5
    directory = sweep_root / "results" / "grid"
    curves = {}
    for calls in (5, 40):
        at.select_slider(key=f"where:{CALLS}").set_value(calls).run()
        drawn = lines(sweep_figures[-1].axes[0])
        assert list(drawn) == ["ws"]
        expected = by_x(rows(directory, "ws", {CALLS: calls}), DECODE, "e2e_reduction")
        np.testing.assert_allclose(drawn["ws"], expected, rtol=1e-12)
        curves[calls] = drawn["ws"][1]
    assert np.all(curves[40] > curves[5]), "more tool calls, a larger reduction at every speed"
    assert len(at.get("image")) == 1
    at.selectbox(key="sweep:kind:line").set_value("heat map").run()
    at.selectbox(key="sweep:hue").set_value(CALLS).run()
    assert_clean(at)
    grid = cells(sweep_figures[-1].axes[0])
    for row in rows(directory, "ws"):
        j, i = [5, 20, 40].index(row[CALLS]), [65.0, 1000.0, 4000.0].index(row[DECODE])
        assert grid[j, i] == pytest.approx(row["e2e_reduction"], rel=1e-12)


def test_the_sweep_explorer_draws_the_rows_of_an_uploaded_parquet_file(
    sweep_root: Path, sweep_figures: list[Figure]
) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    at.radio(key="sweep:source").set_value("a Parquet file").run()
    part = next((sweep_root / "results" / "grid" / "parts").iterdir())
    at.file_uploader(key="sweep:upload").set_value(
        (part.name, part.read_bytes(), "application/octet-stream")
    ).run()
    assert_clean(at)
    assert at.get("image")
    part_rows = [
        r for r in pq.read_table(part).to_pylist() if r["transport"] == "ws" and r[CALLS] == 5
    ]
    drawn = lines(sweep_figures[-1].axes[0])
    np.testing.assert_allclose(drawn["ws"], by_x(part_rows, DECODE, "e2e_reduction"))
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
