"""The dashboard's figures (Vega-Lite through Altair), sized to be read on a projector.

Every chart is a single view (no concatenation or facets), so it takes the width of its
place on the page and its legend stays inside it, on a wide screen or a narrow one.

Stage colours, order and labels come from ``models.stages.Stage``, as in the
command-line tables and the trace export.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

import altair as alt
import pandas as pd

from models.published import DECODE_MARKS
from models.stages import STAGES
from sim.dashboard.knobs import DECODE, DECODE_MARKS_TPS

Chart = alt.Chart | alt.LayerChart | alt.FacetChart | alt.HConcatChart
"""The kinds of chart the dashboard draws (what ``st.altair_chart`` takes)."""

TopLevel = TypeVar("TopLevel", bound=alt.TopLevelMixin)

TRANSPORT_COLOURS = {
    "http": "#d62728",
    "http-full": "#9467bd",
    "ws": "#1f77b4",
    "ws-append": "#2ca02c",
}
"""One colour per transport, for the curves (stages keep their own palette)."""


_FONT_PX = 16
_BAR_PX = 64
_LEGEND_COLUMNS = 2
"""Stage legend columns: two fit beside each other in an 800 px window's page."""
_LEGEND_ROW_PX = 24
_AXIS_PX = 70
_AMDAHL_PX = 420
PANEL_PX = 320
"""Height of a panel of curves."""
_PADDING_PX = {"top": 8, "left": 5, "right": 5, "bottom": 5}


@dataclass(frozen=True)
class Figure:
    """A chart and the height it needs on the page, legend included."""

    chart: Chart
    height_px: int


def _stage_figure(chart: Chart, frame: pd.DataFrame, plot_px: int) -> Figure:
    """Charts with a stage legend below the plot need their full height given to the page."""
    legend_rows = math.ceil(frame["stage"].nunique() / _LEGEND_COLUMNS)
    return Figure(readable(chart), plot_px + _AXIS_PX + legend_rows * _LEGEND_ROW_PX + 20)


def budget_chart(frame: pd.DataFrame) -> Figure:
    """Stacked bars of the critical path per transport; segments labelled with their share."""
    order = list(dict.fromkeys(frame["transport"]))
    y = alt.Y("transport:N", sort=order, title=None)
    base = alt.Chart(frame)
    bars = base.mark_bar(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("start_s:Q", title="seconds per rollout on the critical path"),
        x2="end_s:Q",
        y=y,
        color=_stage_colour(frame),
        tooltip=[
            alt.Tooltip("transport:N"),
            alt.Tooltip("stage_label:N", title="stage"),
            alt.Tooltip("seconds:Q", format=".3f", title="s / rollout"),
            alt.Tooltip("share:Q", format=".1%"),
        ],
    )
    shares = (
        base.transform_filter(alt.datum.share >= 0.06)
        .transform_calculate(mid_s="(datum.start_s + datum.end_s) / 2")
        .mark_text(color="white", fontSize=_FONT_PX - 1, fontWeight="bold")
        .encode(x="mid_s:Q", y=y, text=alt.Text("share:Q", format=".0%"))
    )
    totals = (
        base.transform_aggregate(total_s="max(end_s)", groupby=["transport"])
        .transform_calculate(label="format(datum.total_s, '.1f') + ' s'")
        .mark_text(align="left", dx=6, fontSize=_FONT_PX + 2, fontWeight="bold")
        .encode(x="total_s:Q", y=y, text="label:N")
    )
    plot_px = _BAR_PX * len(order) + 20
    return _stage_figure((bars + shares + totals).properties(height=plot_px), frame, plot_px)


def rollout_chart(frame: pd.DataFrame) -> Figure:
    """A Gantt chart of one rollout per transport: every stage of every turn."""
    rows = list(dict.fromkeys(frame["row"]))
    plot_px = _BAR_PX * len(rows) + 20
    chart = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X(
                "start_s:Q",
                title="seconds since the first shown turn started",
                scale=alt.Scale(domainMin=0),
            ),
            x2="end_s:Q",
            y=alt.Y("row:N", sort=rows, title=None, axis=alt.Axis(labelLimit=300)),
            color=_stage_colour(frame),
            tooltip=[
                alt.Tooltip("row:N", title="transport"),
                alt.Tooltip("turn:Q"),
                alt.Tooltip("stage_label:N", title="stage"),
                alt.Tooltip("duration_ms:Q", format=".1f", title="ms"),
            ],
        )
        .properties(height=plot_px)
        .interactive(bind_y=False)
    )
    return _stage_figure(chart, frame, plot_px)


def amdahl_chart(curve: pd.DataFrame, current: pd.DataFrame, baseline: str) -> alt.LayerChart:
    """End-to-end reduction against decode speed (log axis); published speeds and the
    scenario's own point marked."""
    x_scale = alt.Scale(type="log", domain=[DECODE.low, DECODE.high])
    x = alt.X("decode_tps:Q", scale=x_scale, title="decode speed (tokens/s, log scale)")
    y = alt.Y(
        "e2e_reduction:Q",
        axis=alt.Axis(format="%"),
        title=f"end-to-end time saved vs {baseline}",
        scale=alt.Scale(domainMin=0),
    )
    colour = transport_colour(curve["transport"])
    lines = alt.Chart(curve).mark_line(strokeWidth=3).encode(x=x, y=y, color=colour)
    marks = pd.DataFrame(
        {"decode_tps": list(DECODE_MARKS_TPS), "label": [_mark_label(v) for v in DECODE_MARKS_TPS]}
    )
    rules = alt.Chart(marks).mark_rule(strokeDash=[6, 4], color="#666").encode(x=x)
    rule_text = (
        alt.Chart(marks)
        .mark_text(align="right", dx=-6, dy=-10, fontSize=_FONT_PX - 2, color="#444")
        .encode(x=x, y=alt.datum(0), text="label:N")
    )
    dot = (
        alt.Chart(current)
        .mark_point(size=320, filled=True, stroke="black", strokeWidth=2)
        .encode(x=x, y=y, color=colour, tooltip=_percent_tooltip())
    )
    # The label goes on the side of the point with room for it, inside the plot.
    right_half = (
        bool(len(current))
        and math.log(float(current["decode_tps"].iloc[0]))
        > (math.log(DECODE.low) + math.log(DECODE.high)) / 2
    )
    dot_text = (
        alt.Chart(current)
        .transform_calculate(label="format(datum.e2e_reduction, '.0%') + ' (this scenario)'")
        .mark_text(
            align="right" if right_half else "left",
            dx=-14 if right_half else 14,
            dy=14,
            fontSize=_FONT_PX,
            fontWeight="bold",
        )
        .encode(x=x, y=y, text="label:N")
    )
    chart = (rules + rule_text + lines + dot + dot_text).properties(height=_AMDAHL_PX)
    return readable(chart)


def scaling_charts(
    frame: pd.DataFrame, tool_calls: float
) -> tuple[alt.LayerChart | alt.FacetChart, ...]:
    """API work and end-to-end time against tool calls per rollout, one line per transport:
    two charts, each as wide as its place on the page."""
    colour = transport_colour(frame["transport"])
    x = alt.X("tool_calls:Q", title="tool calls per rollout")
    here = pd.DataFrame({"tool_calls": [tool_calls]})

    def panel(field: str, title: str) -> alt.LayerChart:
        lines = (
            alt.Chart(frame)
            .mark_line(point=True, strokeWidth=3)
            .encode(
                x=x,
                y=alt.Y(f"{field}:Q", title=title),
                color=colour,
                tooltip=["transport:N", "tool_calls:Q", alt.Tooltip(f"{field}:Q", format=".2f")],
            )
        )
        rule = alt.Chart(here).mark_rule(strokeDash=[6, 4], color="#666").encode(x=x)
        return readable((rule + lines).properties(height=PANEL_PX))

    return (
        panel("api_cpu_s", "API work per rollout (s)"),
        panel("e2e_s", "end-to-end per rollout (s)"),
    )


def _stage_colour(frame: pd.DataFrame) -> alt.Color:
    present = set(frame["stage"])
    stages = [stage for stage in STAGES if stage.value in present]
    scale = alt.Scale(
        domain=[stage.label for stage in stages], range=[stage.colour for stage in stages]
    )
    legend = alt.Legend(title=None, orient="bottom", columns=_LEGEND_COLUMNS, symbolSize=220)
    return alt.Color("stage_label:N", scale=scale, legend=legend, sort=None)


def transport_colour(transports: Iterable[str]) -> alt.Color:
    names = list(dict.fromkeys(transports))
    scale = alt.Scale(domain=names, range=[TRANSPORT_COLOURS[name] for name in names])
    # Above the plot: a legend beside it takes width a narrow screen does not have.
    legend = alt.Legend(title="transport", orient="top", direction="horizontal")
    return alt.Color("transport:N", scale=scale, legend=legend)


def _percent_tooltip() -> list[alt.Tooltip]:
    return [
        alt.Tooltip("transport:N"),
        alt.Tooltip("decode_tps:Q", format=",.0f", title="tokens/s"),
        alt.Tooltip("e2e_reduction:Q", format=".1%", title="saved"),
    ]


def _mark_label(tps: float) -> str:
    return f"{tps:,.0f}: {DECODE_MARKS[tps]}"


def readable(chart: TopLevel) -> TopLevel:
    """Fonts big enough for the back of a room, and room around the plot for the ascent of a
    legend title above it (without padding the page clips its top)."""
    return (
        chart.properties(padding=_PADDING_PX)
        .configure_axis(labelFontSize=_FONT_PX, titleFontSize=_FONT_PX + 1)
        .configure_legend(labelFontSize=_FONT_PX - 1, titleFontSize=_FONT_PX, labelLimit=320)
        .configure_view(strokeWidth=0)
        .configure_title(fontSize=_FONT_PX, fontWeight="normal", anchor="start")
    )
