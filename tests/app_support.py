"""Helpers shared by the dashboard tests: the app file, what the page shows, its widgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from models.stages import Stage
from sim.dashboard.knobs import Control, Knob

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT_S = 60


def shown(at: AppTest) -> dict[str, str]:
    """The big numbers on the page: metric label -> value."""
    return {metric.label: metric.value for metric in at.metric}


def budget_table(at: AppTest) -> Any:
    """The budget table (seconds and share per stage and transport) as a DataFrame."""
    return at.dataframe[0].value


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def button(at: AppTest, label: str) -> Any:
    return next(b for b in at.button if b.label == label)


def widget(at: AppTest, knob: Knob) -> Any:
    key = f"knob:{knob.key}"
    if knob.control is Control.LOG_SLIDER:
        return at.select_slider(key=key)
    if knob.control is Control.TOGGLE:
        return at.toggle(key=key)
    return at.slider(key=key)


def seconds(table: Any, stage: Stage, transport: str) -> float:
    """Seconds per rollout of one stage over one transport in the budget table (0 if absent:
    the table leaves out stages that cost nothing)."""
    rows = table.loc[table.index == stage.label, f"{transport} (s)"]
    return float(rows.iloc[0]) if len(rows) else 0.0


def table_reduction(table: Any, baseline: str = "http", other: str = "ws") -> float:
    """The end-to-end reduction the budget table implies: 1 - sum(other) / sum(baseline)."""
    return 1.0 - table[f"{other} (s)"].sum() / table[f"{baseline} (s)"].sum()


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    return at.file_uploader(key="upload").set_value((name, content, "application/toml")).run()
