"""The load view's data: a fleet of agents at several sizes, and its capacity at an SLO.

Thin wrappers over the analytic fleet (``sim.analytic.fleet.network``, drawn on every
change), the fleet DES (``sim.analysis.fleet_summary``, on a button) and the capacity
search, turning their results into tables for plotting.  Every row says its source.
"""

from __future__ import annotations

import pandas as pd

from models.scenario import Scenario
from models.stages import POOLS
from sim.analysis.fleet_results import FleetStats
from sim.analysis.load_curve import load_curve
from sim.analysis.load_points import parse_points
from sim.analysis.metrics import Statistic
from sim.analysis.results import FleetResult, RunResult, UnmeasuredPoint
from sim.analysis.run import Engine
from sim.analytic.fleet.demand import fleet_demand
from sim.analytic.fleet.network import closed_curve
from sim.capacity.estimate import SloEstimate
from sim.capacity.objectives import SLO_METRICS, CapacityResult, Slo, SloMetric
from sim.capacity.search import search
from sim.turn.transports import Transport

DEFAULT_AGENTS = "10, 100, 200, 300"
ANALYTIC, SIMULATED = "analytic", "simulation"
"""The two sources of a row: the queueing model (means) and the fleet DES."""
CURVE_POINTS = 60
"""Populations on an analytic curve (at most; one per agent for small fleets)."""
DEFAULT_SLO = Slo(SloMetric.TTFT_P95_S, 1.0)
SLO_NAMES = tuple(SLO_METRICS)


def agent_counts(text: str) -> list[int]:
    """Load points from ``10, 100, 200``; a bad list raises a one-line ScenarioError."""
    return sorted(set(parse_points("agents", text, int)))


def load_point(scenario: Scenario, transport: Transport, agents: int) -> FleetResult:
    """The fleet result (latency, throughput, utilization with CIs) of ``agents`` agents."""
    spec = f"{scenario.name}:{transport}"
    (point,) = load_curve(spec, scenario, transport, Engine.DES, agents=[agents])
    return point


def analytic_frames(
    scenario: Scenario, transports: tuple[Transport, ...], max_agents: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(latency, utilization) rows of the analytic fleet from 1 to ``max_agents`` agents."""
    latency, utilization = [], []
    for transport in transports:
        curve = closed_curve(fleet_demand(scenario, transport), max_agents)
        step = max(1, max_agents // CURVE_POINTS)
        for point in curve[step - 1 :: step]:
            head = {"transport": transport.value, "agents": point.agents, "source": ANALYTIC}
            latency.append(
                {**head, "statistic": "mean", "e2e_s": point.e2e_s, "ttft_ms": point.ttft_s * 1e3}
            )
            for pool in POOLS:
                utilization.append(
                    {**head, "pool": pool.value, "utilization": point.utilization[pool]}
                )
    return pd.DataFrame(latency), pd.DataFrame(utilization)


def latency_frame(points: list[FleetResult]) -> pd.DataFrame:
    """One row per (transport, agents, statistic) of DES points: e2e (s) and TTFT (ms)."""
    rows = []
    for point in _measured(points):
        for statistic in (Statistic.MEAN, Statistic.P95):
            ttft_s = point.ttft_s.statistic(statistic)
            rows.append(
                {
                    "transport": point.transport.value,
                    "agents": point.fleet.load.agents,
                    "source": SIMULATED,
                    "statistic": statistic.value,
                    "e2e_s": point.e2e_s.statistic(statistic),
                    "ttft_ms": None if ttft_s is None else ttft_s * 1000,
                }
            )
    return pd.DataFrame(rows)


def utilization_frame(points: list[FleetResult]) -> pd.DataFrame:
    """One row per (transport, agents, pool) of DES points: mean utilization."""
    rows = []
    for point in _measured(points):
        for pool in POOLS:
            rows.append(
                {
                    "transport": point.transport.value,
                    "agents": point.fleet.load.agents,
                    "source": SIMULATED,
                    "pool": pool.value,
                    "utilization": point.fleet.utilization[pool].mean,
                }
            )
    return pd.DataFrame(rows)


def rate_limit_notes(
    scenario: Scenario, transports: tuple[Transport, ...], points: list[FleetResult]
) -> list[str]:
    """What the organizations' rate limits do: the cap per transport (analytic) and the
    429s of each simulated point; empty without a limit."""
    if not scenario.rate_limit.limits:
        return []
    notes = []
    for transport in transports:
        cap = fleet_demand(scenario, transport).rate_cap
        if cap is None:
            continue
        notes.append(
            f"{transport}: the rate limit ({cap.binding}) admits {cap.rollouts_per_s:.3g} "
            "rollouts/s; above that the agents cycle at that rate and the rest of a rollout "
            "is 429s and their retry-afters (the retry stage)"
        )
    for point in _measured(points):
        limited = point.fleet.rate_limit
        if limited is not None:
            notes.append(
                f"simulated {point.transport}, {point.fleet.load.agents:,} agents: "
                f"{limited.admitted_requests_per_min.mean:,.0f} requests/min admitted per "
                f"organization, {limited.refused_per_request:.2f} 429s per request"
            )
    return notes


def capacity(scenario: Scenario, transport: Transport, slo: Slo, max_agents: int) -> CapacityResult:
    """The largest closed population that meets ``slo`` (analytic estimate, DES probes)."""
    return search(scenario, transport, [slo], max_agents)


def capacity_estimate(scenario: Scenario, transport: Transport, slo: Slo, max_agents: int) -> int:
    """The analytic model's capacity at ``slo``, before any simulation."""
    return SloEstimate(scenario, transport).capacity([slo], max_agents)


def _measured(points: list[FleetResult]) -> list[RunResult[FleetStats]]:
    return [point for point in points if not isinstance(point, UnmeasuredPoint)]
