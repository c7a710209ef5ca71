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
    where: DeltaGenerator, title: str, files: dict[str, tuple[str, Callable[[], bytes]]]
) -> None:
    """One download button per file (suffix -> (mime type, maker)), side by side."""
    for column, (suffix, (mime, make)) in zip(
        where.columns(len(files)), files.items(), strict=True
    ):
        column.download_button(
            f"{suffix.lstrip('.').upper()}",
            make,
            file_name=file_name(title, suffix),
            mime=mime,
            key=f"download:{title}{suffix}",
            help=f"download {title} as {suffix}",
            width="stretch",
        )


def _container(where: DeltaGenerator | None) -> DeltaGenerator:
    """A container in ``where`` (None: the page)."""
    return st.container() if where is None else where.container()


def chart_downloads(
    chart: alt.TopLevelMixin, title: str, where: DeltaGenerator | None = None
) -> None:
    """PNG and SVG of a chart."""
    buttons(
        _container(where),
        title,
        {
            ".png": ("image/png", lambda: chart_png(chart)),
            ".svg": ("image/svg+xml", lambda: chart_svg(chart)),
        },
    )


def table_download(frame: pd.DataFrame, title: str, where: DeltaGenerator | None = None) -> None:
    """A table as CSV."""
    buttons(_container(where), title, {".csv": ("text/csv", lambda: frame.to_csv().encode())})


def rollouts_download(table: pa.Table, title: str, where: DeltaGenerator | None = None) -> None:
    """A simulation's per-rollout records as CSV and as Parquet."""
    buttons(
        _container(where),
        title,
        {
            ".csv": ("text/csv", lambda: _encoded(table, ".csv")),
            ".parquet": ("application/octet-stream", lambda: _encoded(table, ".parquet")),
        },
    )


def _encoded(table: pa.Table, suffix: str) -> bytes:
    return encode(RecordTables(table, table.slice(0, 0)), suffix)["rollouts"]
