"""The dashboard's cached engine calls and the runs a session has asked for.

Every cached function takes the scenario as JSON, so Streamlit's cache keys it
by value (seed included); pure computations live in ``sim.dashboard.data``,
``sim.dashboard.load`` and ``sim.dashboard.sweeps``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from models.scenario import Scenario
from sim.analysis.results import FleetResult
from sim.analysis.run import Engine, Run
from sim.capacity.objectives import CapacityResult, Slo
from sim.dashboard import data, sweeps
from sim.dashboard import load as fleet
from sim.sweep.results_table import Results as SweepResults
from sim.turn.transports import Transport

REQUESTED = "simulated"
"""Session-state key: the keys of the runs asked for in this session."""


@st.cache_data(show_spinner=False, max_entries=256)
def analytic(scenario_json: str, transports: tuple[Transport, ...]) -> data.Results:
    """Expected budgets and reductions (analytic engine)."""
    return data.evaluate(Scenario.model_validate_json(scenario_json), transports)


@st.cache_data(show_spinner=False, max_entries=256)
def amdahl_curve(shape_json: str, transports: tuple[Transport, ...]) -> pd.DataFrame:
    """The Amdahl curve; the key is the scenario at a fixed decode speed (the curve ignores it)."""
    return data.amdahl_frame(Scenario.model_validate_json(shape_json), transports)


@st.cache_data(show_spinner=False, max_entries=256)
def scaling_curves(shape_json: str, transports: tuple[Transport, ...]) -> pd.DataFrame:
    """Work against turns; the key is the scenario at one tool call (the curves ignore it)."""
    return data.scaling_frame(Scenario.model_validate_json(shape_json), transports)


@st.cache_data(show_spinner=False, max_entries=64)
def one_rollout(
    scenario_json: str, transports: tuple[Transport, ...], rollout: int, turns: tuple[int, int]
) -> pd.DataFrame:
    """Stage spans of one simulated rollout under each transport."""
    scenario = Scenario.model_validate_json(scenario_json)
    return data.rollout_frame(scenario, transports, rollout, turns)


@st.cache_data(show_spinner=False, max_entries=64)
def simulated(scenario_json: str, transport: Transport, rollouts: int) -> Run:
    """A DES run, cached per scenario (its seed included), transport and rollouts."""
    return data.run(Scenario.model_validate_json(scenario_json), transport, Engine.DES, rollouts)


def simulate_all(
    scenario: Scenario, transports: tuple[Transport, ...], rollouts: int, where: DeltaGenerator
) -> tuple[data.Results, list[Run]]:
    """DES results of every transport and their runs, with a progress bar while any is not
    cached yet."""
    bar = where.progress(0.0)
    runs = []
    for done, transport in enumerate(transports):
        bar.progress(done / len(transports), text=f"simulating {transport}: {rollouts} rollouts")
        runs.append(simulated(scenario.model_dump_json(), transport, rollouts))
    bar.empty()
    return data.results_of(runs), runs


@st.cache_data(show_spinner=False, max_entries=128)
def fleet_point(scenario_json: str, transport: Transport, agents: int) -> FleetResult:
    """One load point of the fleet engine, cached per scenario, transport and agents."""
    scenario = Scenario.model_validate_json(scenario_json)
    return fleet.load_point(scenario, transport, agents)


@st.cache_data(show_spinner=False, max_entries=64)
def fleet_curves(
    scenario_json: str, transports: tuple[Transport, ...], max_agents: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The analytic fleet's latency and utilization curves up to ``max_agents``."""
    scenario = Scenario.model_validate_json(scenario_json)
    return fleet.analytic_frames(scenario, transports, max_agents)


@st.cache_data(show_spinner=False, max_entries=64)
def fleet_estimate(scenario_json: str, transport: Transport, slo: Slo, max_agents: int) -> int:
    """The analytic capacity estimate of one transport at one SLO."""
    scenario = Scenario.model_validate_json(scenario_json)
    return fleet.capacity_estimate(scenario, transport, slo, max_agents)


@st.cache_data(show_spinner="searching for the capacity…", max_entries=32)
def fleet_capacity(
    scenario_json: str, transport: Transport, slo: Slo, max_agents: int
) -> CapacityResult:
    """The capacity search of one transport, cached per scenario, SLO and bound."""
    return fleet.capacity(Scenario.model_validate_json(scenario_json), transport, slo, max_agents)


@st.cache_data(show_spinner=False, max_entries=16)
def sweep_results(path: str, parts: int) -> SweepResults:
    """A results directory's rows; ``parts`` (finished parts) invalidates a growing sweep."""
    return SweepResults.load(path)


@st.cache_data(show_spinner=False, max_entries=128)
def sweep_image(
    source: str,
    _results: SweepResults,
    choice: tuple[str, str | None, str, str | None],
    where: tuple[tuple[str, Any], ...],
    transports: tuple[str, ...],
    image_format: str,
) -> bytes:
    """A sweep figure as ``image_format`` (png, svg), drawn once per source, choice (kind, x,
    metric, hue) and format."""
    kind, x, y, hue = choice
    figure = sweeps.sweep_figure(_results, kind, x, y, hue, dict(where), transports)
    return sweeps.png_bytes(figure) if image_format == "png" else sweeps.svg_bytes(figure)


def requested(key: str, clicked: bool) -> bool:
    """Whether a run was asked for in this session: a button press is remembered per key."""
    asked = st.session_state.setdefault(REQUESTED, set())
    if clicked:
        asked.add(key)
    return key in asked


def run_key(scenario: Scenario, transports: tuple[Transport, ...], *extra: Any) -> str:
    """A key naming one requested run: the scenario, the transports and the run's options."""
    text = f"{scenario.model_dump_json()}|{','.join(transports)}|{extra}"
    return hashlib.sha256(text.encode()).hexdigest()
