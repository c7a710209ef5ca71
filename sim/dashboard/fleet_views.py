"""The dashboard's fleet views: latency and utilization against agents, capacity at an SLO."""

from __future__ import annotations

import itertools

import pandas as pd
import streamlit as st

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.analysis.load_curve import check_points
from sim.capacity.objectives import Slo, SloMetric, with_agents
from sim.dashboard import downloads, load_charts
from sim.dashboard import load as fleet
from sim.dashboard.cache import (
    fleet_capacity,
    fleet_curves,
    fleet_estimate,
    fleet_point,
    requested,
    run_key,
)
from sim.dashboard.views import show_chart
from sim.turn.transports import Transport

UTILIZATION_COLUMNS = 2
"""The pools' utilization charts side by side, in rows of this many."""


def load_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    """Latency and utilization against concurrent agents, and the capacity at an SLO: the
    analytic fleet on every change, the fleet DES on a button."""
    load = scenario.load
    st.caption(
        f"Agents share the API cell of the scenario's capacity section. The lines are the "
        f"analytic fleet (a queueing network, means only), redrawn on every change; "
        f"'Simulate the fleet' adds the DES: {load.duration_s:g} s after a "
        f"{load.warmup_s:g} s warm-up, {load.replications} replications per point (change "
        f"them under Advanced: load)."
    )
    text = st.text_input(
        "concurrent agents (comma-separated)", fleet.DEFAULT_AGENTS, key="load:agents"
    )
    try:
        counts = fleet.agent_counts(text)
        for transport in transports:
            scenarios = [with_agents(scenario, agents) for agents in counts]
            check_points(f"{scenario.name}:{transport}", scenarios, transport)
    except ScenarioError as error:
        st.error(str(error))
        return
    latency, utilization = fleet_curves(scenario.model_dump_json(), transports, max(counts))
    points = []
    key = run_key(scenario, transports, "load", *counts)
    if requested(key, st.button("Simulate the fleet", type="primary")):
        bar = st.progress(0.0)
        total = len(transports) * len(counts)
        for done, (transport, agents) in enumerate(itertools.product(transports, counts)):
            bar.progress(done / total, text=f"simulating {transport}: {agents} agents")
            points.append(fleet_point(scenario.model_dump_json(), transport, agents))
        bar.empty()
        latency = pd.concat([latency, fleet.latency_frame(points)], ignore_index=True)
        utilization = pd.concat([utilization, fleet.utilization_frame(points)], ignore_index=True)
    name = scenario.name
    st.caption(load_charts.LATENCY_NOTE)
    e2e, ttft = load_charts.latency_charts(latency)
    show_chart(e2e, f"{name}-load-e2e", "the fleet end-to-end chart")
    show_chart(ttft, f"{name}-load-ttft", "the fleet TTFT chart")
    pools = list(load_charts.utilization_charts(utilization).items())
    for first in range(0, len(pools), UTILIZATION_COLUMNS):
        row = pools[first : first + UTILIZATION_COLUMNS]
        for column, (pool, chart) in zip(st.columns(UTILIZATION_COLUMNS), row, strict=False):
            show_chart(chart, f"{name}-load-{pool}", f"the {pool} chart", column)
    for note in fleet.rate_limit_notes(scenario, transports, points):
        st.caption(note)
    downloads.table_download(
        latency, f"{name}-load-latency-table", "the latency table (analytic and simulated)"
    )
    downloads.table_download(
        utilization,
        f"{name}-load-utilization-table",
        "the utilization table (analytic and simulated)",
    )
    capacity_view(scenario, transports)


def capacity_view(scenario: Scenario, transports: tuple[Transport, ...]) -> None:
    st.subheader("Capacity at an SLO")
    metric_box, limit_box, bound_box = st.columns(3)
    metric = metric_box.selectbox(
        "SLO metric", fleet.SLO_NAMES, index=fleet.SLO_NAMES.index(fleet.DEFAULT_SLO.metric)
    )
    limit_s = limit_box.number_input(
        "limit (s)", min_value=0.001, value=fleet.DEFAULT_SLO.limit_s, format="%g"
    )
    max_agents = bound_box.number_input(
        "search up to (agents)", 1, 100_000, 2_000, key="capacity:max_agents"
    )
    slo = Slo(SloMetric(metric), float(limit_s))
    estimates = {
        t.value: fleet_estimate(scenario.model_dump_json(), t, slo, int(max_agents))
        for t in transports
    }
    st.caption(
        "Analytic estimate: "
        + ", ".join(f"{name} {agents:,} agents" for name, agents in estimates.items())
        + ". 'Find the capacity' checks it with DES probes near it."
    )
    key = run_key(scenario, transports, "capacity", metric, limit_s, max_agents)
    if not requested(key, st.button("Find the capacity")):
        return
    found = {
        t.value: fleet_capacity(scenario.model_dump_json(), t, slo, int(max_agents))
        for t in transports
    }
    for column, (name, result) in zip(st.columns(len(found)), found.items(), strict=True):
        failing = result.first_failing_agents
        column.metric(
            f"{name}: agents meeting {metric} <= {limit_s:g} s",
            f"{result.capacity_agents:,}",
            delta=f"{failing:,} do not" if failing is not None else None,
            delta_color="off",
            delta_arrow="off",
        )
    baseline = found[transports[0].value].capacity_agents
    for name, result in list(found.items())[1:]:
        if baseline:
            st.markdown(
                f"#### {name} serves {result.capacity_agents / baseline:.2f}x the agents of "
                f"{transports[0].value} at this SLO."
            )
