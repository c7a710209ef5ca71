"""One run: a spec (scenario and transport), an engine, and what it produced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from models.errors import ScenarioError
from models.loading import load_scenario
from models.scenario import Scenario
from sim.analysis.estimates import check_run
from sim.analysis.spec import Engine as Engine
from sim.analysis.spec import Spec as Spec
from sim.analysis.spec import parse_engine as parse_engine
from sim.analysis.spec import parse_spec as parse_spec
from sim.des.replication import Replication
from sim.des.runners import Progress, simulate
from sim.turn.records import RolloutRecords, TurnRecords

if TYPE_CHECKING:
    from sim.analytic.agent.expectations import Expectation

TRACE_ROLLOUTS = 20
"""Measured rollouts of a fleet's first replication whose turns a trace shows."""


@dataclass(frozen=True)
class _RunHead:
    spec: Spec
    scenario: Scenario
    engine: Engine
    rollouts: int
    overrides: tuple[str, ...]
    """The ``PATH=VALUE`` overrides the scenario was loaded with (recorded in the result)."""


@dataclass(frozen=True)
class SimulatedRun(_RunHead):
    """One agent simulated by the DES: a row per rollout (and per turn when kept)."""

    records: RolloutRecords

    def turn_records(self) -> TurnRecords:
        return _kept_turns(self.spec, self.records)


@dataclass(frozen=True)
class AnalyticRun(_RunHead):
    """One agent evaluated in closed form: expected values per rollout."""

    expectation: Expectation

    def turn_records(self) -> TurnRecords:
        raise ScenarioError(f"{self.spec.text}: the analytic engine keeps no per-turn rows")


@dataclass(frozen=True)
class FleetRun(_RunHead):
    """A fleet simulated by the DES: independent replications of the load point."""

    replications: list[Replication]

    def turn_records(self) -> TurnRecords:
        """The first replication's sample of per-turn rows."""
        return _kept_turns(self.spec, self.replications[0].records)


Run = SimulatedRun | AnalyticRun | FleetRun
"""The outcome of one run, by what produced it."""


def _kept_turns(spec: Spec, records: RolloutRecords) -> TurnRecords:
    if records.turn_records is None:
        raise ScenarioError(f"{spec.text}: this run kept no per-turn rows")
    return records.turn_records


def load(spec: Spec, overrides: tuple[str, ...] = (), seed: int | None = None) -> Scenario:
    """The validated scenario of a spec with overrides (and the seed, if given)."""
    extra = (f"seed={seed}",) if seed is not None else ()
    return load_scenario(spec.source, (*overrides, *extra))


def execute(
    spec: Spec,
    scenario: Scenario,
    engine: Engine,
    rollouts: int,
    keep_turns: bool = False,
    progress: Progress | None = None,
    overrides: tuple[str, ...] = (),
) -> Run:
    """Evaluate one spec with the chosen engine, once its estimate is within the caps.

    ``overrides`` are recorded in the run.
    """
    if rollouts < 1:
        raise ScenarioError(f"rollouts = {rollouts}: must be an integer >= 1")
    if engine is Engine.ANALYTIC and scenario.on_fleet:
        raise ScenarioError(
            "engine = 'analytic': it models one agent without contention or rate limits; "
            "use --engine des, or load.agents = 1 and no rate_limit"
        )
    check_run(spec.text, scenario, spec.transport, engine is Engine.ANALYTIC, rollouts, keep_turns)
    head = (spec, scenario, engine, rollouts, overrides)
    # Each engine loads when it runs: one agent's simulation needs neither of the others.
    if engine is Engine.ANALYTIC:
        from sim.analytic.agent.engine import expect

        return AnalyticRun(*head, expect(scenario, spec.transport))
    if scenario.on_fleet:
        from sim.analysis.fleet_summary import run_fleet

        return FleetRun(
            *head, run_fleet(scenario, spec.transport, TRACE_ROLLOUTS if keep_turns else 0)
        )
    return SimulatedRun(*head, simulate(scenario, spec.transport, rollouts, keep_turns, progress))
