"""Capacity search: the largest closed population of agents that meets latency SLOs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import stdtrit

from models.errors import ScenarioError
from models.loading import with_changes
from models.scenario import Scenario
from sim.analysis.fleet_summary import pool_demand_s, run_fleet
from sim.engine.analytic import expect
from sim.engine.des import Replication
from sim.engine.transports import Transport

SLO_METRICS = {
    f"{quantity}_{statistic}_s": (quantity, statistic)
    for quantity in ("ttft", "e2e")
    for statistic in ("mean", "p50", "p95", "p99")
}
"""SLO names: TTFT per turn or end-to-end per rollout, by mean or percentile, in seconds."""


@dataclass(frozen=True)
class Slo:
    """A latency objective: ``metric`` must stay at or below ``limit_s``."""

    metric: str
    limit_s: float


def parse_slo(text: str) -> Slo:
    """``metric=limit_s``, e.g. ``ttft_p95_s=1.0``."""
    metric, sep, value = text.partition("=")
    allowed = ", ".join(SLO_METRICS)
    if metric in SLO_METRICS and not sep:
        raise ScenarioError(f"--slo {metric!r}: missing its limit, e.g. {metric}=1.0 (seconds)")
    if not sep or metric not in SLO_METRICS:
        raise ScenarioError(f"--slo {text!r}: unknown SLO metric {metric!r}; allowed: {allowed}")
    try:
        limit_s = float(value)
    except ValueError:
        limit_s = float("nan")
    if not limit_s > 0:
        raise ScenarioError(f"--slo {metric} = {value!r}: must be a number of seconds > 0")
    return Slo(metric, limit_s)


def slo_value(slo: Slo, replication: Replication) -> float:
    """The SLO's statistic measured in one replication."""
    quantity, statistic = SLO_METRICS[slo.metric]
    records = replication.records
    if records.count == 0:
        return float("inf")
    values = records.turn_ttft_s if quantity == "ttft" else records.e2e_s
    if statistic == "mean":
        return float(values.mean())
    return float(np.percentile(values, float(statistic[1:])))


def with_agents(scenario: Scenario, agents: int) -> Scenario:
    """The scenario under a closed population of ``agents``."""
    return with_changes(scenario, ['load.kind="closed"', f"load.agents={agents}"])


def saturation_estimate(scenario: Scenario, transport: Transport) -> int:
    """Agents at which the busiest pool would reach full utilization (analytic, no queueing)."""
    e = expect(scenario, transport)
    cycle_s = e.e2e_s + scenario.load.think_time_s.mean
    busiest_s = max(pool_demand_s(scenario, e).values())
    return max(1, int(cycle_s / busiest_s))


@dataclass(frozen=True)
class Evaluation:
    """One load point of the search."""

    agents: int
    meets: bool
    values: dict[str, dict[str, Any]]


def evaluate(scenario: Scenario, transport: Transport, agents: int, slos: list[Slo]) -> Evaluation:
    """Simulate ``agents`` agents and check every SLO (point estimate = mean over replications)."""
    replications = run_fleet(with_agents(scenario, agents), transport)
    values = {}
    meets = True
    for slo in slos:
        per_rep = np.array([slo_value(slo, r) for r in replications])
        mean = float(per_rep.mean())
        half = float(stdtrit(per_rep.size - 1, 0.975) * per_rep.std(ddof=1) / np.sqrt(per_rep.size))
        values[slo.metric] = {
            "value_s": mean,
            "ci95": [mean - half, mean + half],
            "limit_s": slo.limit_s,
            "met_with_95pct_confidence": mean + half <= slo.limit_s,
        }
        meets = meets and mean <= slo.limit_s
    return Evaluation(agents, meets, values)


def search(
    scenario: Scenario,
    transport: Transport,
    slos: list[Slo],
    max_agents: int = 100_000,
    relative_tolerance: float = 0.05,
    on_evaluation: Callable[[Evaluation], None] | None = None,
) -> dict[str, Any]:
    """Bracket then bisect on the number of agents; returns the largest load that meets the SLOs."""
    seen: dict[int, Evaluation] = {}

    def check(agents: int) -> bool:
        if agents not in seen:
            seen[agents] = evaluate(scenario, transport, agents, slos)
            if on_evaluation is not None:
                on_evaluation(seen[agents])
        return seen[agents].meets

    guess = min(max_agents, saturation_estimate(scenario, transport))
    if check(guess):
        low, high = guess, None
        while high is None:
            candidate = min(max_agents, low * 2)
            if candidate == low:
                high = low
            elif check(candidate):
                low = candidate
            else:
                high = candidate
    else:
        high, low = guess, None
        while low is None:
            candidate = high // 2
            if candidate < 1:
                low = 0
            elif check(candidate):
                low = candidate
            else:
                high = candidate
    while high - low > max(1, int(relative_tolerance * max(low, 1))):
        middle = (low + high) // 2
        if check(middle):
            low = middle
        else:
            high = middle
    return {
        "transport": transport.value,
        "capacity_agents": low,
        "first_failing_agents": high if high != low else None,
        "at_capacity": seen[low].values if low in seen else None,
        "evaluations": [
            {"agents": e.agents, "meets": e.meets, "slos": e.values}
            for e in sorted(seen.values(), key=lambda e: e.agents)
        ],
        "saturation_estimate_agents": guess,
    }
