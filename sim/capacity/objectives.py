"""Capacity at latency SLOs: the objectives, a probe of one load, and the answer.

The search itself is ``sim.capacity.search``; the analytic estimate
that brackets it is ``sim.capacity.estimate``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from models.errors import ScenarioError
from models.loading import with_changes
from models.scenario import Scenario
from sim.analysis.metrics import Metric, Statistic
from sim.analysis.stats import t_interval
from sim.analysis.warmup import steady_state
from sim.des.replication import Replication
from sim.turn.transports import Transport


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


class Verdict(StrEnum):
    """What a probe's replications say about the SLOs at its load."""

    MET = "met with 95% confidence"
    MISSED = "missed with 95% confidence"
    UNDECIDED = "undecided at 95% confidence"


@dataclass(frozen=True)
class SloCheck:
    """One SLO at one load: the mean over replications and its Student-t 95% interval."""

    value_s: float
    ci95: tuple[float, float] | None
    limit_s: float

    @property
    def verdict(self) -> Verdict:
        if self.ci95 is None:
            return Verdict.UNDECIDED
        if self.ci95[1] <= self.limit_s:
            return Verdict.MET
        return Verdict.MISSED if self.ci95[0] > self.limit_s else Verdict.UNDECIDED

    def to_json(self) -> dict[str, Any]:
        return {
            "value_s": self.value_s,
            "ci95": None if self.ci95 is None else list(self.ci95),
            "limit_s": self.limit_s,
            "met_with_95pct_confidence": self.verdict is Verdict.MET,
            "missed_with_95pct_confidence": self.verdict is Verdict.MISSED,
        }


@dataclass(frozen=True)
class Evaluation:
    """One probe: a load, its replications' SLO statistics, and what they decide."""

    agents: int
    checks: dict[SloMetric, SloCheck]
    replications: int
    warmup_cut_s: float

    @property
    def meets(self) -> bool:
        """The point estimate: every SLO's mean over replications is within its limit."""
        return all(check.value_s <= check.limit_s for check in self.checks.values())

    @property
    def verdict(self) -> Verdict:
        """Missed if any SLO is missed with 95% confidence; met if all are met so."""
        verdicts = {check.verdict for check in self.checks.values()}
        if Verdict.MISSED in verdicts:
            return Verdict.MISSED
        return Verdict.MET if verdicts == {Verdict.MET} else Verdict.UNDECIDED

    def to_json(self) -> dict[str, Any]:
        slos = {metric.value: check.to_json() for metric, check in self.checks.items()}
        return {
            "agents": self.agents,
            "meets": self.meets,
            "verdict": self.verdict.value,
            "replications": self.replications,
            Metric.WARMUP_CUT_S.value: self.warmup_cut_s,
            "slos": slos,
        }


def evaluation(agents: int, replications: list[Replication], slos: list[Slo]) -> Evaluation:
    """The SLO checks of ``agents`` agents from their replications (each from its warm-up cut).

    A probe whose measured window holds no finished rollout stops the search with
    a one-line error rather than a guess.
    """
    empty = next((r for r in replications if r.records.count == 0), None)
    if empty is not None:
        what = "no rollout started" if empty.rollouts_started == 0 else "no rollout finished"
        raise ScenarioError(
            f"capacity probe of {agents:,} agents: {what} in a replication's "
            f"{empty.window_s:g} s measured window; lengthen load.duration_s"
        )
    steady = steady_state(replications)
    checks = {}
    for slo in slos:
        per_rep = np.array([slo_value(slo, r) for r in steady.replications])
        checks[slo.metric] = SloCheck(float(per_rep.mean()), t_interval(per_rep), slo.limit_s)
    return Evaluation(agents, checks, len(replications), steady.cut_s)


@dataclass(frozen=True)
class CapacityResult:
    """The largest population meeting the SLOs under one transport, and how it was found.

    ``capacity_agents`` is the point estimate: the largest load probed whose mean
    over replications meets every SLO, with the next load probed (within the
    search's resolution) missing one.  The interval is what the probes decided
    at 95%: its low end the largest load met with 95% confidence, its high end
    the load below the smallest one missed with 95% confidence.
    """

    transport: Transport
    capacity_agents: int
    first_failing_agents: int | None
    ci95_agents: tuple[int, int | None]
    evaluations: tuple[Evaluation, ...]
    analytic_estimate_agents: int
    saturation_agents: float
    """N* from the analytic model: where the asymptotic throughput bounds cross."""

    @property
    def at_capacity(self) -> Evaluation | None:
        return next((e for e in self.evaluations if e.agents == self.capacity_agents), None)

    @property
    def replications(self) -> int:
        return sum(e.replications for e in self.evaluations)

    def to_json(self) -> dict[str, Any]:
        at = self.at_capacity
        return {
            "transport": self.transport.value,
            "engine": "des-fleet",
            "capacity_agents": self.capacity_agents,
            "first_failing_agents": self.first_failing_agents,
            "capacity_ci95_agents": list(self.ci95_agents),
            "at_capacity": None if at is None else at.to_json()["slos"],
            Metric.PROBES.value: len(self.evaluations),
            "replications": self.replications,
            "evaluations": [e.to_json() for e in self.evaluations],
            "analytic_estimate_agents": self.analytic_estimate_agents,
            "saturation_estimate_agents": self.saturation_agents,
        }
