"""Capacity search: the largest closed population of agents that meets latency SLOs."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from scipy.special import stdtrit

from models.errors import ScenarioError
from models.loading import with_changes
from models.scenario import Scenario
from sim.analysis.estimates import check_fleet
from sim.analysis.fleet_summary import pool_demand_s, run_fleet
from sim.analysis.metrics import Metric, Statistic
from sim.engine.analytic import expect
from sim.engine.des import Replication
from sim.engine.transports import Transport


class SloMetric(StrEnum):
    """An SLO's statistic: TTFT per turn or end-to-end per rollout, by mean or percentile (s)."""

    TTFT_MEAN_S = "ttft_mean_s"
    TTFT_P50_S = "ttft_p50_s"
    TTFT_P95_S = "ttft_p95_s"
    TTFT_P99_S = "ttft_p99_s"
    E2E_MEAN_S = "e2e_mean_s"
    E2E_P50_S = "e2e_p50_s"
    E2E_P95_S = "e2e_p95_s"
    E2E_P99_S = "e2e_p99_s"

    @property
    def quantity(self) -> Metric:
        return Metric.TTFT_S if self.value.startswith("ttft") else Metric.E2E_S

    @property
    def statistic(self) -> Statistic:
        return Statistic(self.value.split("_")[1])


SLO_METRICS: tuple[str, ...] = tuple(m.value for m in SloMetric)
"""SLO names, as written on the command line."""


@dataclass(frozen=True)
class Slo:
    """A latency objective: ``metric`` must stay at or below ``limit_s``."""

    metric: SloMetric
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
    if not (limit_s > 0 and math.isfinite(limit_s)):
        raise ScenarioError(f"--slo {metric} = {value!r}: must be a finite number of seconds > 0")
    return Slo(SloMetric(metric), limit_s)


def slo_value(slo: Slo, replication: Replication) -> float:
    """The SLO's statistic measured in one replication."""
    records = replication.records
    if records.count == 0:
        return float("inf")
    values = records.turn_ttft_s if slo.metric.quantity is Metric.TTFT_S else records.e2e_s
    percentile = slo.metric.statistic.percentile
    return float(values.mean() if percentile is None else np.percentile(values, percentile))


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
class SloCheck:
    """One SLO at one load point: the mean over replications and its 95% interval."""

    value_s: float
    ci95: tuple[float, float]
    limit_s: float

    @property
    def met_with_95pct_confidence(self) -> bool:
        return self.ci95[1] <= self.limit_s

    def to_json(self) -> dict[str, Any]:
        return {
            "value_s": self.value_s,
            "ci95": list(self.ci95),
            "limit_s": self.limit_s,
            "met_with_95pct_confidence": self.met_with_95pct_confidence,
        }


@dataclass(frozen=True)
class Evaluation:
    """One load point of the search: does its point estimate meet every SLO?"""

    agents: int
    checks: dict[SloMetric, SloCheck]

    @property
    def meets(self) -> bool:
        return all(check.value_s <= check.limit_s for check in self.checks.values())

    def to_json(self) -> dict[str, Any]:
        slos = {metric.value: check.to_json() for metric, check in self.checks.items()}
        return {"agents": self.agents, "meets": self.meets, "slos": slos}


@dataclass(frozen=True)
class CapacityResult:
    """The largest population meeting the SLOs under one transport, and how it was found."""

    transport: Transport
    capacity_agents: int
    first_failing_agents: int | None
    evaluations: tuple[Evaluation, ...]
    saturation_estimate_agents: int

    @property
    def at_capacity(self) -> Evaluation | None:
        return next((e for e in self.evaluations if e.agents == self.capacity_agents), None)

    def to_json(self) -> dict[str, Any]:
        at = self.at_capacity
        return {
            "transport": self.transport.value,
            "capacity_agents": self.capacity_agents,
            "first_failing_agents": self.first_failing_agents,
            "at_capacity": None if at is None else at.to_json()["slos"],
            "evaluations": [e.to_json() for e in self.evaluations],
            "saturation_estimate_agents": self.saturation_estimate_agents,
        }


def evaluate(scenario: Scenario, transport: Transport, agents: int, slos: list[Slo]) -> Evaluation:
    """Simulate ``agents`` agents and check every SLO (point estimate = mean over replications).

    A probe over the caps, or one whose measured window holds no finished rollout, stops
    the search with a one-line error rather than a guess.
    """
    probe = with_agents(scenario, agents)
    check_fleet(f"capacity probe of {agents:,} agents", probe, transport)
    replications = run_fleet(probe, transport)
    empty = next((r for r in replications if r.records.count == 0), None)
    if empty is not None:
        what = "no rollout started" if empty.rollouts_started == 0 else "no rollout finished"
        raise ScenarioError(
            f"capacity probe of {agents:,} agents: {what} in a replication's "
            f"{probe.load.duration_s:g} s measured window; lengthen load.duration_s"
        )
    checks = {}
    for slo in slos:
        per_rep = np.array([slo_value(slo, r) for r in replications])
        mean = float(per_rep.mean())
        half = float(stdtrit(per_rep.size - 1, 0.975) * per_rep.std(ddof=1) / np.sqrt(per_rep.size))
        checks[slo.metric] = SloCheck(mean, (mean - half, mean + half), slo.limit_s)
    return Evaluation(agents, checks)


def search(
    scenario: Scenario,
    transport: Transport,
    slos: list[Slo],
    max_agents: int = 100_000,
    relative_tolerance: float = 0.05,
    on_evaluation: Callable[[Evaluation], None] | None = None,
) -> CapacityResult:
    """Bracket then bisect on the number of agents; the largest load that meets the SLOs."""
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
    return CapacityResult(
        transport=transport,
        capacity_agents=low,
        first_failing_agents=high if high != low else None,
        evaluations=tuple(sorted(seen.values(), key=lambda e: e.agents)),
        saturation_estimate_agents=guess,
    )
