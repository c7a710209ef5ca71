"""loopbudget dashboard: where the time of an AI agent's loop goes, HTTP against WebSocket mode.

Start it with ``make dashboard``.  Analytic numbers follow every widget; the
discrete-event simulation runs on a button and is cached per scenario and seed.
The page is assembled here from the ``sim.dashboard`` modules: the sidebar
(``panel``), the views (``views``, ``fleet_views``, ``sweep_view``, ``trace_view``) and the
cached engine calls (``cache``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from models.errors import ScenarioError
from sim.dashboard import data
from sim.dashboard.fleet_views import load_view
from sim.dashboard.panel import scenario_panel
from sim.dashboard.style import readable_text
from sim.dashboard.sweep_view import sweep_view
from sim.dashboard.trace_view import trace_view
from sim.dashboard.views import amdahl_view, budget_view, rollout_view, scaling_view
from sim.turn.transports import Transport


def main() -> None:
    st.set_page_config(page_title="loopbudget", layout="wide")
    readable_text()
    scenario = scenario_panel()
    st.title("Where does the time go in an agent's loop?")
    st.markdown(f"**{scenario.name}**: {scenario.description}")
    agent = data.single_agent(scenario)
    if agent is not scenario:
        st.info(
            f"This scenario puts a fleet in front of the API ({scenario.load.kind} load). "
            "The budget, rollout, Amdahl and scaling views show one agent without contention; "
            "the load view shows the fleet."
        )
    chosen = st.multiselect(
        "transports (the first is the baseline)",
        [t.value for t in Transport],
        default=[t.value for t in data.DEFAULT_TRANSPORTS],
        key="transports",
        help="; ".join(f"{t.value}: {t.description}" for t in Transport),
    )
    if not chosen:
        st.info("Pick at least one transport.")
        return
    transports = tuple(Transport(name) for name in chosen)
    budget, rollout, amdahl, scaling, load, sweep, trace = st.tabs(
        [
            "Budget",
            "One rollout",
            "Amdahl: decode speed",
            "Scaling: turns",
            "Load",
            "Sweeps",
            "Your trace",
        ]
    )
    with budget:
        guarded(budget_view, agent, transports)
    with rollout:
        guarded(rollout_view, agent, transports)
    with amdahl:
        guarded(amdahl_view, agent, transports)
    with scaling:
        guarded(scaling_view, agent, transports)
    with load:
        guarded(load_view, scenario, transports)
    with sweep:
        guarded(sweep_view)
    with trace:
        guarded(trace_view)


def guarded(view: Callable[..., None], *args: Any) -> None:
    """Draw a view; bad input it meets (a run over a cap) is a message in its place."""
    try:
        view(*args)
    except ScenarioError as error:
        st.error(str(error))


# Streamlit runs this file as __main__; the guard keeps worker processes that
# re-import the main module (multiprocessing spawn, Dask) from drawing the page.
if __name__ == "__main__":
    main()
