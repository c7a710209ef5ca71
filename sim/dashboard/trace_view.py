"""The dashboard's trace view: upload an agent's trace, see its fitted scenario beside it.

The trace is read and fitted as ``loopbudget fit`` does (docs/traces.md); the page
shows how the fitted scenario's simulation compares with the trace's measured
rollouts (e2e per rollout, TTFT per request: a table and cumulative
distributions), the fitted scenario's budget on the recorded transport, and the
scenario itself to download.  A trace that cannot be used is one line in place of
the view.
"""

from __future__ import annotations

import altair as alt
import streamlit as st

from models.errors import ScenarioError
from models.loading import preset_names
from models.scenario import Scenario
from sim.dashboard import charts, data, downloads
from sim.dashboard.cache import analytic
from sim.dashboard.trace_data import (
    AS_RECORDED,
    TraceFit,
    comparison_frame,
    distribution_frame,
    fit_upload,
)
from sim.traces.fit import DEFAULT_PRESET
from sim.traces.table import TRANSPORTS
from sim.turn.transports import Transport

FORMATS = "Codex rollout JSONL, OTLP JSON (GenAI spans, loopbudget record), Agents SDK spans"


UPLOAD_PROMPT = (
    "Upload a trace to fit a scenario to it (`loopbudget record` writes one for any "
    "agent; docs/traces.md lists the formats)."
)
"""What the trace view shows until a trace is uploaded."""


@st.cache_data(show_spinner="Reading and fitting the trace…", max_entries=8)
def _fitted(
    file_id: str, file_name: str, _content: bytes, extends: str, transport: str
) -> TraceFit:
    """The fit of one upload (keyed by its id, not its bytes) with these choices."""
    return fit_upload(file_name, _content, extends, transport)


def trace_view() -> None:
    """Upload a trace, fit it, and show the fitted scenario beside the measured rollouts."""
    upload = st.file_uploader(f"an agent's trace ({FORMATS})", key="trace:upload")
    presets = preset_names()
    extends_box, transport_box = st.columns(2)
    extends = extends_box.selectbox(
        "fields the trace cannot inform come from",
        presets,
        index=presets.index(DEFAULT_PRESET),
        key="trace:extends",
    )
    transport = transport_box.selectbox(
        "transport the trace was recorded with",
        [AS_RECORDED, *TRANSPORTS],
        key="trace:transport",
    )
    if upload is None:
        st.info(UPLOAD_PROMPT)
        return
    try:
        result = _fitted(upload.file_id, upload.name, upload.getvalue(), extends, transport)
    except ScenarioError as error:
        st.error(str(error))
        return
    for line in result.warnings:
        st.warning(line)
    _show(result)


def _show(result: TraceFit) -> None:
    st.markdown(
        f"**{result.file_name}**: {result.rollouts:,} rollouts, {result.requests:,} requests "
        f"over {result.transport}; {result.fitted_fields} fields fitted, "
        f"{len(result.assumed)} assumed from the preset."
    )
    table = comparison_frame(result)
    st.dataframe(
        table.style.format("{:.4g}").format("{:+.1%}", subset=["rel. error"]), width="stretch"
    )
    st.caption(
        f"The fitted scenario simulated over {result.transport} "
        f"({result.simulated_e2e_s.size:,} rollouts, the DES) against the trace's own rollouts."
    )
    st.altair_chart(distribution_chart(result), width="stretch", theme=None)
    scenario = Scenario.model_validate_json(result.scenario_json)
    transports = (Transport(result.transport),)
    budget = data.budget_frame(analytic(result.scenario_json, transports))
    figure = charts.budget_chart(budget)
    st.markdown(f"#### The fitted scenario's budget over {result.transport}")
    st.altair_chart(figure.chart, width="stretch", height=figure.height_px, theme=None)
    with st.expander("What was assumed (the trace does not inform it)"):
        st.markdown("\n".join(f"- {item}" for item in result.assumed))
    downloads.buttons(
        None,
        f"{scenario.name}-fitted",
        "the fitted scenario",
        {".toml": ("application/toml", lambda: result.toml.encode())},
    )


def distribution_chart(result: TraceFit) -> alt.HConcatChart:
    """Cumulative distributions of e2e and TTFT: the trace against the fitted scenario."""
    frame = distribution_frame(result)
    panels = []
    for quantity in dict.fromkeys(frame["quantity"]):
        panels.append(
            alt.Chart(frame[frame["quantity"] == quantity])
            .mark_line()
            .encode(
                x=alt.X("seconds:Q", title=quantity),
                y=alt.Y("share:Q", title="share at or below", axis=alt.Axis(format="%")),
                color=alt.Color("source:N", title=None, legend=alt.Legend(orient="bottom")),
                strokeDash=alt.StrokeDash("source:N", legend=None),
            )
            .properties(width=320, height=240)
        )
    return alt.hconcat(*panels)
