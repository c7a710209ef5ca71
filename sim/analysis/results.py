"""Typed results: what a run and a comparison report, with ``to_json()`` and flat rows.

Every key comes from ``Metric`` and ``Statistic``; ``to_json()`` gives the
objects ``loopbudget run --json`` and ``compare --json`` print, ``flat()`` one
row with those keys joined by underscores (the Parquet columns of a sweep).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from models.stages import STAGES, Stage
from sim.analysis.fleet_results import FleetHead, FleetStats
from sim.analysis.metrics import REDUCTIONS, Metric, Statistic
from sim.turn.transports import Transport

if TYPE_CHECKING:
    import pandas as pd

Interval = tuple[float, float]


@dataclass(frozen=True)
class Estimate:
    """A value and its 95% confidence interval (None where the engine gives none)."""

    value: float
    ci95: Interval | None = None

    def to_json(self) -> dict[str, Any]:
        return {Statistic.MEAN: self.value, Statistic.CI95: _pair(self.ci95)}


@dataclass(frozen=True)
class Latency:
    """A latency distribution: mean, percentiles and the mean's 95% CI (None if not known)."""

    mean: float
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None
    ci95: Interval | None = None

    def statistic(self, statistic: Statistic) -> float | None:
        """The mean or a percentile (the interval is not one number)."""
        values = {
            Statistic.MEAN: self.mean,
            Statistic.P50: self.p50,
            Statistic.P95: self.p95,
            Statistic.P99: self.p99,
        }
        return values[statistic]

    def to_json(self) -> dict[str, Any]:
        return {
            Statistic.MEAN: self.mean,
            Statistic.P50: self.p50,
            Statistic.P95: self.p95,
            Statistic.P99: self.p99,
            Statistic.CI95: _pair(self.ci95),
        }


F = TypeVar("F", bound=FleetStats | None)


@dataclass(frozen=True)
class ResultHead:
    """What was run: the spec, its scenario's name, transport and engine, and what was drawn
    (``seed`` and ``rollouts`` are None for the analytic engines, which draw nothing)."""

    spec: str
    scenario: str
    transport: Transport
    engine: str
    seed: int | None
    rollouts: int | None


@dataclass(frozen=True)
class RunResult(ResultHead, Generic[F]):
    """One spec under one engine: the latency budget per rollout, and a fleet's statistics
    (``RunResult[FleetStats]``; ``RunResult[None]`` for one agent)."""

    e2e_s: Latency
    ttft_s: Latency
    budget_s: dict[Stage, float]
    api_cpu_s_per_rollout: float
    safety_cpu_s_per_rollout: float
    turns_per_rollout: float
    reconnects_per_rollout: float
    prefix_cache_hit_rate: float
    """Cached prompt tokens over prompt tokens (``kv_cache``: an outcome of residency, or
    the fixed fraction's share in the simple mode)."""
    fleet: F
    approximations: tuple[str, ...] = ()
    scenario_hash: str | None = None
    """``models.scenario_hash``: tells two scenarios apart (the seed is reported beside it)."""
    overrides: tuple[str, ...] = ()
    """The ``PATH=VALUE`` overrides applied to the spec's scenario, in order."""

    stable = True
    """A result with means is a stable point (``UnmeasuredPoint`` is the other kind)."""

    @cached_property
    def budget_share(self) -> dict[Stage, float]:
        total = float(np.sum(list(self.budget_s.values())))
        return {stage: seconds / total for stage, seconds in self.budget_s.items()}

    def to_json(self) -> dict[str, Any]:
        head = _head_json(self)
        if self.fleet is None:
            head[Metric.ROLLOUTS] = self.rollouts
            if self.approximations:
                head[Metric.APPROXIMATIONS] = list(self.approximations)
        else:
            head.update(self.fleet.head_json())
            head[Metric.ROLLOUTS] = self.rollouts
            if self.approximations:
                head[Metric.APPROXIMATIONS] = list(self.approximations)
        share = self.budget_share
        body: dict[str, Any] = {
            Metric.E2E_S: self.e2e_s.to_json(),
            Metric.TTFT_S: self.ttft_s.to_json(),
            Metric.API_CPU_S_PER_ROLLOUT: self.api_cpu_s_per_rollout,
            Metric.SAFETY_CPU_S_PER_ROLLOUT: self.safety_cpu_s_per_rollout,
            Metric.TURNS_PER_ROLLOUT: self.turns_per_rollout,
            Metric.RECONNECTS_PER_ROLLOUT: self.reconnects_per_rollout,
            Metric.PREFIX_CACHE_HIT_RATE: self.prefix_cache_hit_rate,
            Metric.BUDGET_S: {stage.value: self.budget_s[stage] for stage in STAGES},
            Metric.BUDGET_SHARE: {stage.value: share[stage] for stage in STAGES},
        }
        if self.fleet is not None:
            body.update(self.fleet.body_json())
        return _plain({**head, **body})

    def flat(self) -> dict[str, Any]:
        return flatten(self.to_json())

    def to_frame(self) -> pd.DataFrame:
        """One row: ``flat()``'s columns (those of a sweep's Parquet rows)."""
        import pandas as pd

        return pd.DataFrame([self.flat()])


@dataclass(frozen=True)
class UnmeasuredPoint(ResultHead):
    """A fleet load point without means: unstable (a queue grows without bound) or with no
    rollout finished in its window.  Its JSON has the keys of ``RunResult`` with null means."""

    fleet: FleetHead
    scenario_hash: str | None = None
    overrides: tuple[str, ...] = ()

    @property
    def stable(self) -> bool:
        return self.fleet.stable

    def to_json(self) -> dict[str, Any]:
        head = _head_json(self)
        head.update(self.fleet.head_json())
        head[Metric.ROLLOUTS] = self.rollouts
        return _plain({**head, Metric.E2E_S: None, Metric.TTFT_S: None})

    def flat(self) -> dict[str, Any]:
        return flatten(self.to_json())


FleetResult = RunResult[FleetStats] | UnmeasuredPoint
"""What a fleet load point gives: means, or the reason there are none."""


def _head_json(result: RunResult[Any] | UnmeasuredPoint) -> dict[str, Any]:
    return {
        Metric.SPEC: result.spec,
        Metric.SCENARIO: result.scenario,
        Metric.SCENARIO_HASH: result.scenario_hash,
        Metric.OVERRIDES: list(result.overrides),
        Metric.TRANSPORT: result.transport.value,
        Metric.ENGINE: result.engine,
        Metric.SEED: result.seed,
    }


@dataclass(frozen=True)
class Comparison:
    """Side b against baseline a: both runs and the reductions of b relative to a."""

    a: RunResult[Any] | UnmeasuredPoint
    b: RunResult[Any] | UnmeasuredPoint
    reductions: dict[Metric, Estimate]
    """Empty when a side is an unstable fleet point."""

    def reduction(self, metric: Metric) -> float:
        return self.reductions[metric].value

    def measured(self) -> tuple[RunResult[Any], RunResult[Any]]:
        """Both sides' results, when both have means (a reduction needs both)."""
        if isinstance(self.a, UnmeasuredPoint) or isinstance(self.b, UnmeasuredPoint):
            raise ValueError(f"{self.a.spec} against {self.b.spec}: a side has no means")
        return self.a, self.b

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"a": self.a.to_json(), "b": self.b.to_json()}
        for metric in REDUCTIONS:
            if metric in self.reductions:
                estimate = self.reductions[metric]
                out[metric.value] = estimate.value
                out[metric.ci95.value] = _pair(estimate.ci95)
        return out

    def to_frame(self) -> pd.DataFrame:
        """Two rows, a then b (``side``), with ``RunResult.to_frame``'s columns; b's row
        also holds the reductions, as the non-baseline rows of a sweep do."""
        import pandas as pd

        payload = self.to_json()
        reductions = flatten({k: v for k, v in payload.items() if k not in ("a", "b")})
        rows = [{"side": "a", **self.a.flat()}, {"side": "b", **self.b.flat(), **reductions}]
        return pd.DataFrame(rows)


def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """JSON keys flattened with underscores; a ``*_ci95`` pair becomes ``*_ci95_low``/``_high``."""
    flat: dict[str, Any] = {}
    for key, value in summary.items():
        name = prefix + key
        if type(value) is float:
            flat[name] = value
        elif isinstance(value, dict):
            flat.update(flatten(value, name + "_"))
        elif key.endswith("ci95"):
            low, high = value if value is not None else (None, None)
            flat[name + "_low"], flat[name + "_high"] = low, high
        elif isinstance(value, list | tuple):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def _pair(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [float(interval[0]), float(interval[1])]


def _plain(payload: dict[str, Any]) -> dict[str, Any]:
    """Enum keys as their plain string values (what ``json.dumps`` writes anyway)."""
    return {
        str(key): _plain(value) if isinstance(value, dict) else value
        for key, value in payload.items()
    }
