"""Simulated turns per second of the engines and of the bare SimPy skeletons.

The models are timed in interleaved rounds (each round runs every model once),
so a burst of load from elsewhere on the machine hits all of them rather than
one, and the best round of each is kept.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.events import counted_events
from benchmarks.skeleton import run_skeleton
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analytic.agent.engine import expect
from sim.des.runners import simulate
from sim.turn.transports import Transport


@dataclass(frozen=True)
class Workload:
    """One model over a fixed set of rollouts, as a callable to time."""

    model: str
    rollouts: int
    turns: int
    run: Callable[[], object]


@dataclass(frozen=True)
class Speed:
    """One model's best wall time over its rollouts, and the events it processed."""

    model: str
    rollouts: int
    turns: int
    events: int
    best_s: float

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.best_s

    @property
    def events_per_s(self) -> float:
        return self.events / self.best_s

    @property
    def events_per_turn(self) -> float:
        return self.events / self.turns


def des_workload(scenario: Scenario, transport: Transport, rollouts: int) -> Workload:
    """The discrete-event engine's event queue on ``rollouts`` rollouts (summary records only;
    ``simulate``'s vectorised pass for one agent is measured by ``benchmarks.waits``)."""
    records = simulate(scenario, transport, rollouts, reference=True)
    return Workload(
        model=f"des {transport.value}",
        rollouts=records.count,
        turns=int(records.turns.sum()),
        run=lambda: simulate(scenario, transport, rollouts, reference=True),
    )


def skeleton_workload(
    model: str, turns_per_rollout: Sequence[int], durations_s: np.ndarray
) -> Workload:
    """A skeleton doing the given turns with one timeout per entry of ``durations_s``."""
    return Workload(
        model=model,
        rollouts=len(turns_per_rollout),
        turns=int(sum(turns_per_rollout)),
        run=lambda: run_skeleton(turns_per_rollout, durations_s),
    )


def measure(workloads: Sequence[Workload], repeats: int) -> list[Speed]:
    """Best wall time of each workload over ``repeats`` interleaved rounds, and its events.

    Events are counted in a separate untimed pass, which also serves as a warm-up.
    """
    events = [_count_events(w.run) for w in workloads]
    best_s = best_in_rounds([w.run for w in workloads], repeats)
    return [
        Speed(w.model, w.rollouts, w.turns, count, seconds)
        for w, count, seconds in zip(workloads, events, best_s, strict=True)
    ]


def best_in_rounds(runs: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Best wall seconds of each callable over ``repeats`` rounds that each call all of them."""
    best_s = [float("inf")] * len(runs)
    for _ in range(repeats):
        for index, run in enumerate(runs):
            best_s[index] = min(best_s[index], time_once(run))
    return best_s


def time_once(run: Callable[[], object]) -> float:
    """Wall seconds of one call, after collecting the garbage of earlier calls."""
    gc.collect()
    began_s = time.perf_counter()
    run()
    return time.perf_counter() - began_s


def stage_means_s(scenario: Scenario, transport: Transport) -> np.ndarray:
    """Expected seconds of each stage in one turn, in ``STAGES`` order."""
    expectation = expect(scenario, transport)
    return expectation.stage_s / expectation.turns


def coalesced_means_s(stage_s: np.ndarray) -> np.ndarray:
    """The per-stage durations of one turn coalesced as the engine does: request, then tool."""
    tool = STAGES.index(Stage.TOOL)
    return np.array([stage_s.sum() - stage_s[tool], stage_s[tool]])


def analytic_against_des(
    scenario: Scenario, transport: Transport, evaluations: int, rollouts: int, repeats: int
) -> tuple[float, float]:
    """Best seconds of one ``expect`` call (averaged over ``evaluations`` calls) and of one
    DES run of ``rollouts`` rollouts, timed in interleaved rounds."""

    def evaluate() -> None:
        for _ in range(evaluations):
            expect(scenario, transport)

    batch = des_workload(scenario, transport, rollouts)
    evaluations_s, batch_s = best_in_rounds([evaluate, batch.run], repeats)
    return evaluations_s / evaluations, batch_s


def _count_events(run: Callable[[], object]) -> int:
    with counted_events() as tally:
        run()
    return tally.events
