"""The load view's figures: latency and pool utilization against the number of agents,
the analytic engine's curves beside the simulation's points."""

from __future__ import annotations

import altair as alt
import pandas as pd

from models.stages import POOLS
from sim.dashboard.charts import PANEL_PX, readable, transport_colour

_UTILIZATION_PX = 220


LATENCY_NOTE = "thin: analytic mean; with points: simulated mean (solid) and p95 (dashed)"
"""How to read the load view's latency charts (a caption: a chart title does not wrap)."""


def latency_charts(frame: pd.DataFrame) -> tuple[alt.LayerChart | alt.FacetChart, ...]:
    """End-to-end time and TTFT against agents per transport: the analytic mean as a thin
    line, simulated means (solid) and p95 (dashed) with points; two charts."""
    colour = transport_colour(frame["transport"])
    x = alt.X("agents:Q", title="concurrent agents")
    dash = alt.StrokeDash(
        "statistic:N",
        scale=alt.Scale(domain=["mean", "p95"], range=[[1, 0], [6, 4]]),
        legend=None,
    )
    analytic = frame[frame["source"] == "analytic"]
    simulated = frame[frame["source"] == "simulation"]

    def panel(field: str, title: str) -> alt.LayerChart | alt.FacetChart:
        tooltip = ["transport:N", "source:N", "agents:Q", "statistic:N", f"{field}:Q"]
        y = alt.Y(f"{field}:Q", title=title)
        model = (
            alt.Chart(analytic)
            .mark_line(strokeWidth=2, opacity=0.7)
            .encode(x=x, y=y, color=colour, tooltip=tooltip)
        )
        layers = [model]
        if len(simulated):
            layers.append(
                alt.Chart(simulated)
                .mark_line(point=True, strokeWidth=3)
                .encode(x=x, y=y, color=colour, strokeDash=dash, tooltip=tooltip)
            )
        return readable(alt.layer(*layers).properties(height=PANEL_PX))

    return (
        panel("e2e_s", "end-to-end per rollout (s)"),
        panel("ttft_ms", "TTFT per turn (ms)"),
    )


def utilization_charts(frame: pd.DataFrame) -> dict[str, alt.LayerChart | alt.FacetChart]:
    """Utilization of each contended pool against agents, one chart per pool (titled with
    it), by pool: analytic lines, simulated points."""
    present = set(frame["pool"])
    return {
        pool.value: _utilization_chart(frame[frame["pool"] == pool.value], pool.value)
        for pool in POOLS
        if pool.value in present
    }


def _utilization_chart(frame: pd.DataFrame, pool: str) -> alt.LayerChart | alt.FacetChart:
    base = alt.Chart(frame).encode(
        x=alt.X("agents:Q", title="concurrent agents"),
        y=alt.Y(
            "utilization:Q",
            title="utilization",
            axis=alt.Axis(format="%"),
            scale=alt.Scale(domain=[0, 1]),
        ),
        color=transport_colour(frame["transport"]),
        tooltip=[
            "transport:N",
            "source:N",
            "pool:N",
            "agents:Q",
            alt.Tooltip("utilization:Q", format=".0%"),
        ],
    )
    model = base.mark_line(strokeWidth=2, opacity=0.7).transform_filter(
        alt.datum.source == "analytic"
    )
    simulated = base.mark_point(size=90, filled=True).transform_filter(
        alt.datum.source == "simulation"
    )
    chart = alt.layer(model, simulated).properties(height=_UTILIZATION_PX, title=f"{pool} pool")
    return readable(chart)
