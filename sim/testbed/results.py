"""Typed results of a testbed run: measured beside simulated, with relative errors, as JSON.

Keys come from ``Metric`` and ``Statistic`` where those name them and from
``Key`` for what only the testbed reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sim.analysis.metrics import Metric, Statistic


class Key(StrEnum):
    """JSON keys of testbed results."""

    TIME_SCALE = "time_scale"
    TRANSPORTS = "transports"
    MEASURED = "measured"
    SIMULATED = "simulated"
    REL_ERROR = "rel_error"
    REDUCTION = "reduction"
    CONNECTIONS_PER_ROLLOUT = "connections_per_rollout"
    CACHE_MISSES_PER_ROLLOUT = "cache_misses_per_rollout"
    RECOVERY_S = "recovery_s"
    UTILIZATION = "utilization"
    CLIENT = "client"
    E2E_MEAN = "e2e_mean"
    E2E_P95 = "e2e_p95"
    TTFT_MEAN = "ttft_mean"
    ERRORS = "errors"
    FLEET = "fleet"
    AGENTS = "agents"
    SERVER_OVERHEAD_S = "server_overhead_s"
    PEAK_SOCKETS = "peak_sockets"
    TIMER_LATENESS_S = "timer_lateness_s"
    PREDICTED = "predicted"
    PREDICTED_REL_ERROR = "predicted_rel_error"
    OBSERVED = "observed"
    REQUESTS_PER_ROLLOUT = "requests_per_rollout"
    NETWORK = "network"


@dataclass(frozen=True)
class Side:
    """What one side (the testbed or the simulation) gives for a set of rollouts."""

    e2e_mean_s: float
    e2e_p95_s: float
    ttft_mean_s: float
    ttft_p95_s: float
    connections_per_rollout: float
    cache_misses_per_rollout: float
    recovery_s: float
    """Mean seconds of a request that recovered from ``previous_response_not_found``: the
    failed attempt, the reconnection and the resent history (NaN when there was none);
    the simulation prices the turns that recovered on the testbed."""
    budget_s: dict[str, float]
    """Seconds per rollout per stage."""
    utilization: dict[str, float] = field(default_factory=dict)
    requests_per_rollout: float = math.nan

    def to_json(self) -> dict[str, Any]:
        """The JSON object (NaN, where a side has no value, as null)."""
        out: dict[str, Any] = {
            Metric.E2E_S.value: {
                Statistic.MEAN.value: self.e2e_mean_s,
                Statistic.P95.value: self.e2e_p95_s,
            },
            Metric.TTFT_S.value: {
                Statistic.MEAN.value: self.ttft_mean_s,
                Statistic.P95.value: self.ttft_p95_s,
            },
            Key.CONNECTIONS_PER_ROLLOUT.value: self.connections_per_rollout,
            Key.CACHE_MISSES_PER_ROLLOUT.value: _number(self.cache_misses_per_rollout),
            Key.RECOVERY_S.value: _number(self.recovery_s),
            Metric.BUDGET_S.value: self.budget_s,
            Key.REQUESTS_PER_ROLLOUT.value: _number(self.requests_per_rollout),
        }
        if self.utilization:
            out[Key.UTILIZATION.value] = self.utilization
        return out


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def rel_error(measured: float, simulated: float) -> float:
    """(measured - simulated) / simulated."""
    return (measured - simulated) / simulated


@dataclass(frozen=True)
class TransportResult:
    """One transport: measured and simulated over the same rollouts."""

    transport: str
    rollouts: int
    measured: Side
    simulated: Side
    errors: int = 0
    client: dict[str, float] = field(default_factory=dict)
    """The client and network the simulation of this transport used."""
    peak_sockets: int | None = None
    """WebSocket connections open at once at the peak (fleet runs)."""
    timer_lateness_s: dict[str, dict[str, float]] = field(default_factory=dict)
    """How late the emulator's and the driver's sleeps ended (the run's noise floor)."""
    predicted: Side | None = None
    """The simulation with the client calibrated beforehand (on separate rollouts)."""
    observed: dict[str, float] = field(default_factory=dict)
    """Requests and tool calls per rollout as the server made them, rollouts turn-limited."""

    @property
    def rel_errors(self) -> dict[str, float]:
        return self._errors(self.simulated)

    def _errors(self, s: Side) -> dict[str, float]:
        m = self.measured
        return {
            Key.E2E_MEAN.value: rel_error(m.e2e_mean_s, s.e2e_mean_s),
            Key.TTFT_MEAN.value: rel_error(m.ttft_mean_s, s.ttft_mean_s),
            Key.E2E_P95.value: rel_error(m.e2e_p95_s, s.e2e_p95_s),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            Metric.ROLLOUTS.value: self.rollouts,
            Key.MEASURED.value: self.measured.to_json(),
            Key.SIMULATED.value: self.simulated.to_json(),
            Key.REL_ERROR.value: self.rel_errors,
            Key.ERRORS.value: self.errors,
            Key.CLIENT.value: self.client,
            Key.PEAK_SOCKETS.value: self.peak_sockets,
            Key.TIMER_LATENESS_S.value: self.timer_lateness_s,
            Key.PREDICTED.value: None if self.predicted is None else self.predicted.to_json(),
            Key.PREDICTED_REL_ERROR.value: None
            if self.predicted is None
            else self._errors(self.predicted),
            Key.OBSERVED.value: self.observed,
        }


@dataclass(frozen=True)
class LiveResult:
    """A whole run: every transport, the http -> ws reduction, the measured client."""

    spec: str
    time_scale: float
    client: dict[str, float]
    transports: dict[str, TransportResult]
    agents: int = 1
    network: dict[str, Any] = field(default_factory=dict)
    """Which network the run had (``sim.testbed.network.Network``)."""

    def reduction(self, side: str) -> float | None:
        if "http" not in self.transports or "ws" not in self.transports:
            return None
        http, ws = self.transports["http"], self.transports["ws"]

        def pick(result: TransportResult) -> Side:
            return result.measured if side == Key.MEASURED else result.simulated

        return 1.0 - pick(ws).e2e_mean_s / pick(http).e2e_mean_s

    def to_json(self) -> dict[str, Any]:
        return {
            Metric.SPEC.value: self.spec,
            Key.TIME_SCALE.value: self.time_scale,
            Key.AGENTS.value: self.agents,
            Key.NETWORK.value: self.network,
            Key.CLIENT.value: self.client,
            Key.TRANSPORTS.value: {name: r.to_json() for name, r in self.transports.items()},
            Key.REDUCTION.value: {
                Key.MEASURED.value: self.reduction(Key.MEASURED),
                Key.SIMULATED.value: self.reduction(Key.SIMULATED),
            },
        }
