"""Helpers shared by the dashboard tests: the app file, what the page shows, its widgets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
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


def same_row(before: Any, after: Any, stage: Stage) -> bool:
    def row(table: Any) -> Any:
        seconds = [column for column in table.columns if column.endswith("(s)")]
        rows = table.loc[table.index == stage.label, seconds]
        return rows.to_numpy() if len(rows) else np.zeros(0)

    a, b = row(before), row(after)
    return a.shape == b.shape and np.array_equal(a, b)


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    return at.file_uploader(key="upload").set_value((name, content, "application/toml")).run()
