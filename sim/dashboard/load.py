"""The load view's data: a fleet of agents at several sizes, and its capacity at an SLO.

Thin wrappers over ``sim.analysis.fleet_summary`` and ``sim.analysis.capacity`` that turn their
JSON objects into tables for plotting.
"""

from __future__ import annotations

import pandas as pd

from models.scenario import Scenario
from models.stages import POOLS
from sim.analysis.capacity import SLO_METRICS, CapacityResult, Slo, SloMetric, with_agents
from sim.analysis.capacity_search import search
from sim.analysis.fleet_summary import fleet_result, run_fleet
from sim.analysis.load_points import parse_points
from sim.analysis.metrics import Statistic
from sim.analysis.results import RunResult
from sim.engine.transports import Transport

DEFAULT_AGENTS = "10, 100, 200, 300"
DEFAULT_SLO = Slo(SloMetric.TTFT_P95_S, 1.0)
SLO_NAMES = tuple(SLO_METRICS)


def agent_counts(text: str) -> list[int]:
    """Load points from ``10, 100, 200``; a bad list raises a one-line ScenarioError."""
    return sorted(set(parse_points("agents", text, int)))


def load_point(scenario: Scenario, transport: Transport, agents: int) -> RunResult:
    """The fleet result (latency, throughput, utilization with CIs) of ``agents`` agents."""
    point = with_agents(scenario, agents)
    return fleet_result(
        f"{scenario.name}:{transport}", point, transport, run_fleet(point, transport)
    )


def latency_frame(points: list[RunResult]) -> pd.DataFrame:
    """One row per (transport, agents, statistic): end-to-end (s) and TTFT (ms)."""
    rows = []
    for point in points:
        if point.e2e_s is None:
            continue
        for statistic in (Statistic.MEAN, Statistic.P95):
            rows.append(
                {
                    "transport": point.transport.value,
                    "agents": point.fleet.load.agents,
                    "statistic": statistic.value,
                    "e2e_s": point.e2e_s.statistic(statistic),
                    "ttft_ms": point.ttft_s.statistic(statistic) * 1000,
                }
            )
    return pd.DataFrame(rows)


def utilization_frame(points: list[RunResult]) -> pd.DataFrame:
    """One row per (transport, agents, pool): mean utilization across replications."""
    rows = []
    for point in points:
        if point.e2e_s is None:
            continue
        for pool in POOLS:
            rows.append(
                {
                    "transport": point.transport.value,
                    "agents": point.fleet.load.agents,
                    "pool": pool.value,
                    "utilization": point.fleet.utilization[pool].mean,
                }
            )
    return pd.DataFrame(rows)


def capacity(scenario: Scenario, transport: Transport, slo: Slo, max_agents: int) -> CapacityResult:
    """The largest closed population that meets ``slo`` (bracket, then bisect)."""
    return search(scenario, transport, [slo], max_agents)
