"""The dashboard's downloads: each chart as PNG and SVG, tables as CSV, DES records.
Files are made when a button is pressed, not on every rerun."""

from __future__ import annotations

import re
from collections.abc import Callable

import altair as alt
import pandas as pd
import pyarrow as pa
import streamlit as st
import vl_convert
from streamlit.delta_generator import DeltaGenerator

from sim.report.export import RecordTables, encode

PNG_SCALE = 2
"""Pixels per chart pixel in a downloaded PNG (sharp on a projector or a slide)."""


def chart_png(chart: alt.TopLevelMixin) -> bytes:
    return vl_convert.vegalite_to_png(chart.to_json(), scale=PNG_SCALE)


def chart_svg(chart: alt.TopLevelMixin) -> bytes:
    return vl_convert.vegalite_to_svg(chart.to_json()).encode()


def file_name(title: str, suffix: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", title).strip("-") + suffix


def buttons(
    where: DeltaGenerator | None,
    title: str,
    what: str,
    files: dict[str, tuple[str, Callable[[], bytes]]],
) -> None:
    """One download button per file (suffix -> (mime type, maker)) in a row that wraps,
    each labelled with what it downloads and its format, never cut short."""
    container = st.container if where is None else where.container
    row = container(horizontal=True, wrap=True, gap="small")
    for suffix, (mime, make) in files.items():
        row.download_button(
            button_label(what, suffix),
            make,
            file_name=file_name(title, suffix),
            mime=mime,
            key=f"download:{title}{suffix}",
            help=f"download {title} as {suffix}",
            icon=":material/download:",
            width="content",
        )


def button_label(what: str, suffix: str) -> str:
    """``what`` and the file format, e.g. "the budget chart (PNG)"."""
    return f"{what} ({suffix.lstrip('.').upper()})"


def chart_downloads(
    chart: alt.TopLevelMixin,
    title: str,
    what: str = "this chart",
    where: DeltaGenerator | None = None,
) -> None:
    """PNG and SVG of a chart."""
    buttons(
        where,
        title,
        what,
        {
            ".png": ("image/png", lambda: chart_png(chart)),
            ".svg": ("image/svg+xml", lambda: chart_svg(chart)),
        },
    )


def table_download(
    frame: pd.DataFrame, title: str, what: str, where: DeltaGenerator | None = None
) -> None:
    """A table as CSV."""
    buttons(where, title, what, {".csv": ("text/csv", lambda: frame.to_csv().encode())})


def rollouts_download(table: pa.Table, title: str, where: DeltaGenerator | None = None) -> None:
    """A simulation's per-rollout records as CSV and as Parquet."""
    buttons(
        where,
        title,
        "rollout records",
        {
            ".csv": ("text/csv", lambda: _encoded(table, ".csv")),
            ".parquet": ("application/octet-stream", lambda: _encoded(table, ".parquet")),
        },
    )


def _encoded(table: pa.Table, suffix: str) -> bytes:
    return encode(RecordTables(table, table.slice(0, 0)), suffix)["rollouts"]
