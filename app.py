"""loopbudget dashboard: where the time of an AI agent's loop goes, HTTP against WebSocket mode.

Start it with ``make dashboard``.  Analytic numbers follow every widget; the
discrete-event simulation runs on a button and is cached per scenario and seed.
The page is assembled here from the ``sim.dashboard`` modules: the sidebar
(``panel``), the views (``views``, ``fleet_views``, ``sweep_view``) and the
cached engine calls (``cache``).
"""

from __future__ import annotations

import streamlit as st

from sim.dashboard import data
from sim.dashboard.fleet_views import load_view
from sim.dashboard.panel import scenario_panel
from sim.dashboard.style import readable_text
from sim.dashboard.sweep_view import sweep_view
from sim.dashboard.views import amdahl_view, budget_view, rollout_view, scaling_view
from sim.engine.transports import Transport


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
    budget, rollout, amdahl, scaling, load, sweep = st.tabs(
        ["Budget", "One rollout", "Amdahl: decode speed", "Scaling: turns", "Load", "Sweeps"]
    )
    with budget:
        budget_view(agent, transports)
    with rollout:
        rollout_view(agent, transports)
    with amdahl:
        amdahl_view(agent, transports)
    with scaling:
        scaling_view(agent, transports)
    with load:
        load_view(scenario, transports)
    with sweep:
        sweep_view()


# Streamlit runs this file as __main__; the guard keeps worker processes that
# re-import the main module (multiprocessing spawn, Dask) from drawing the page.
if __name__ == "__main__":
    main()
