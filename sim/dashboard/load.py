"""The load view's data: a fleet of agents at several sizes, and its capacity at an SLO.

Thin wrappers over ``sim.analysis.fleet_summary`` and ``sim.analysis.capacity`` that turn their
JSON objects into tables for plotting.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from models.scenario import Scenario
from models.stages import POOLS
from sim.analysis.capacity import SLO_METRICS, Slo, search, with_agents
from sim.analysis.fleet_summary import fleet_summary, run_fleet
from sim.analysis.load_points import parse_points
from sim.analysis.metrics import Metric
from sim.engine.transports import Transport

DEFAULT_AGENTS = "10, 100, 200, 300"
DEFAULT_SLO = Slo("ttft_p95_s", 1.0)
SLO_NAMES = tuple(SLO_METRICS)


def agent_counts(text: str) -> list[int]:
    """Load points from ``10, 100, 200``; a bad list raises a one-line ScenarioError."""
    return sorted(set(parse_points("agents", text, int)))


def load_point(scenario: Scenario, transport: Transport, agents: int) -> dict[str, Any]:
    """The fleet summary (latency, throughput, utilization with CIs) of ``agents`` agents."""
    point = with_agents(scenario, agents)
    return fleet_summary(
        f"{scenario.name}:{transport}", point, transport, run_fleet(point, transport)
    )


def latency_frame(points: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (transport, agents, statistic): end-to-end (s) and TTFT (ms)."""
    rows = []
    for point in points:
        if point[Metric.E2E_S] is None:
            continue
        for statistic in ("mean", "p95"):
            rows.append(
                {
                    "transport": point["transport"],
                    "agents": point["load"]["agents"],
                    "statistic": statistic,
                    "e2e_s": point[Metric.E2E_S][statistic],
                    "ttft_ms": point[Metric.TTFT_S][statistic] * 1000,
                }
            )
    return pd.DataFrame(rows)


def utilization_frame(points: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (transport, agents, pool): mean utilization across replications."""
    rows = []
    for point in points:
        if point[Metric.E2E_S] is None:
            continue
        for pool in POOLS:
            rows.append(
                {
                    "transport": point["transport"],
                    "agents": point["load"]["agents"],
                    "pool": pool,
                    "utilization": point["utilization"][pool]["mean"],
                }
            )
    return pd.DataFrame(rows)


def capacity(scenario: Scenario, transport: Transport, slo: Slo, max_agents: int) -> dict[str, Any]:
    """The largest closed population that meets ``slo`` (bracket, then bisect)."""
    return search(scenario, transport, [slo], max_agents)
