"""Held-out validation: fit on some rollouts, simulate, and compare with the others.

Rollouts (not requests) are split at random with the seed, so a held-out
rollout is wholly unseen.  The fitted scenario is simulated (the DES, on the
trace's transport, ``SIMULATED_ROLLOUTS`` rollouts or more) and compared with the
held-out rollouts: e2e per rollout (mean, p50, p95, each with its relative error
and a bootstrap 95% CI over the held-out rollouts), TTFT per request where the
trace has it, and the two-sample Kolmogorov-Smirnov distance of the e2e.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.analysis.run import Engine, SimulatedRun, Spec, execute
from sim.traces.measures import measure
from sim.traces.table import Request
from sim.turn.transports import Transport

SIMULATED_ROLLOUTS = 1000
BOOTSTRAP_RESAMPLES = 2000


def split(
    requests: Sequence[Request], holdout: float, seed: int
) -> tuple[list[Request], list[Request]]:
    """(fit, held out): whole rollouts, ``holdout`` of them held out, chosen with ``seed``."""
    ids = sorted({r.rollout_id for r in requests})
    rng = np.random.default_rng(seed)
    count = round(holdout * len(ids))
    held = set(np.asarray(ids, dtype=object)[rng.permutation(len(ids))[:count]].tolist())
    return [r for r in requests if r.rollout_id not in held], [
        r for r in requests if r.rollout_id in held
    ]


@dataclass(frozen=True)
class Statistic:
    """Simulated against measured, the relative error and its 95% CI."""

    measured: float
    simulated: float
    relative_error: float
    ci95: tuple[float, float]


@dataclass(frozen=True)
class Validation:
    """The held-out comparison."""

    held_out_rollouts: int
    simulated_rollouts: int
    e2e: dict[str, Statistic]
    ttft: dict[str, Statistic]
    e2e_ks_distance: float
    ttft_ks_distance: float | None
    measured_e2e_s: np.ndarray
    simulated_e2e_s: np.ndarray

    def to_json(self) -> dict[str, Any]:
        def table(values: dict[str, Statistic]) -> dict[str, Any]:
            return {k: vars(v) for k, v in values.items()}

        return {
            "held_out_rollouts": self.held_out_rollouts,
            "simulated_rollouts": self.simulated_rollouts,
            "e2e_s": table(self.e2e),
            "ttft_s": table(self.ttft),
            "e2e_ks_distance": self.e2e_ks_distance,
            "ttft_ks_distance": self.ttft_ks_distance,
        }


def validate_on(
    scenario: Scenario, transport: str, held_out: Sequence[Request], seed: int
) -> Validation:
    """Simulate ``scenario`` and compare it with the held-out requests."""
    m = measure(held_out)
    rollouts = max(SIMULATED_ROLLOUTS, 2 * len(m.rollout_ids))
    spec = Spec(f"{scenario.name}:{transport}", scenario.name, Transport(transport))
    run = execute(spec, scenario.model_copy(update={"seed": seed}), Engine.DES, rollouts)
    if not isinstance(run, SimulatedRun):
        raise ScenarioError(f"fit: {spec.text} runs as a fleet; held-out checks need one agent")
    records = run.records
    rng = np.random.default_rng(seed)
    e2e = _statistics(m.e2e_s, records.e2e_s, rng)
    ttft: dict[str, Statistic] = {}
    ttft_ks = None
    if m.ttft_s.size:
        ttft = _statistics(m.ttft_s, records.turn_ttft_s, rng)
        ttft_ks = float(stats.ks_2samp(m.ttft_s, records.turn_ttft_s).statistic)
    return Validation(
        held_out_rollouts=len(m.rollout_ids),
        simulated_rollouts=rollouts,
        e2e=e2e,
        ttft=ttft,
        e2e_ks_distance=float(stats.ks_2samp(m.e2e_s, records.e2e_s).statistic),
        ttft_ks_distance=ttft_ks,
        measured_e2e_s=m.e2e_s,
        simulated_e2e_s=records.e2e_s,
    )


def _statistics(
    measured: np.ndarray, simulated: np.ndarray, rng: np.random.Generator
) -> dict[str, Statistic]:
    out = {}
    for name, function in (
        ("mean", np.mean),
        ("p50", lambda v: np.percentile(v, 50)),
        ("p95", lambda v: np.percentile(v, 95)),
    ):
        sim_value = float(function(simulated))
        seen = float(function(measured))
        # The CI of the relative error resamples both sides' rollouts.
        errors = [
            float(function(rng.choice(simulated, simulated.size)))
            / float(function(rng.choice(measured, measured.size)))
            - 1.0
            for _ in range(BOOTSTRAP_RESAMPLES // 4)
        ]
        low, high = np.percentile(errors, [2.5, 97.5])
        out[name] = Statistic(seen, sim_value, sim_value / seen - 1.0, (float(low), float(high)))
    return out
