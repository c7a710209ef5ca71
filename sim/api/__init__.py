"""The Python API for notebooks and scripts: what the command line does, as function calls.

    from sim import api

    agent = api.scenario("codex-spark", {"network.rtt_ms": 90})
    result = api.run(agent, "ws", engine="analytic")         # a RunResult
    result.to_frame()                                          # one row, the --json keys
    both = api.compare("codex-spark:http", "codex-spark:ws")  # a Comparison, paired DES

Every function returns the typed results of ``sim.analysis`` (``RunResult``,
``Comparison``, ``CapacityResult``) or a table; results have ``to_json()``
(what ``--json`` prints) and ``to_frame()`` (a ``pandas.DataFrame`` with the
Parquet columns of a sweep).  Bad input raises ``ScenarioError`` with the
command line's one-line message.  ``docs/api.md`` walks through each call; its
examples run in the test suite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from models.errors import ScenarioError
from models.loading import load_scenario, with_changes
from models.scenario import Scenario
from models.scenario_hash import scenario_hash
from models.stages import STAGES
from sim.analysis.load_curve import load_curve as shared_load_curve
from sim.analysis.results import Comparison, FleetResult, RunResult, UnmeasuredPoint
from sim.analysis.run import Run, Spec, execute, parse_engine, parse_spec
from sim.analysis.summary import compare as compare_runs
from sim.analysis.summary import summarize
from sim.api.arguments import (
    overrides_of,
    path_of,
    rollouts_of,
    seed_of,
    slos_of,
    target_of,
    text_or_none,
    whole,
)
from sim.api.overrides import Overrides, assignments
from sim.capacity.estimate import SloEstimate
from sim.capacity.objectives import CapacityResult, Slo, parse_slo
from sim.capacity.search import search
from sim.report.export import RecordTables, record_tables
from sim.turn.transports import Transport

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Comparison",
    "LoadCurve",
    "RunResult",
    "ScenarioError",
    "UnmeasuredPoint",
    "budget",
    "capacity",
    "capacity_estimate",
    "compare",
    "load_curve",
    "read_sweep",
    "records",
    "run",
    "scenario",
    "scenario_hash",
    "sweep",
]

Target = str | Scenario
"""A spec (``"codex-spark:ws"``, ``"my-agent.toml"``) or a loaded scenario."""


def scenario(
    source: Target = "codex-spark", overrides: Overrides = None, seed: int | None = None
) -> Scenario:
    """A validated scenario: a preset name, a TOML file, or a scenario to change.

    ``overrides`` maps paths to values (``{"workload.tools[3].weight": 0.3}``) or is a
    list of ``"PATH=VALUE"`` strings, exactly like ``--set``.
    """
    source, seed = target_of(source), seed_of(seed)
    changes = [
        *assignments(overrides_of(overrides)),
        *([f"seed={seed}"] if seed is not None else []),
    ]
    if isinstance(source, Scenario):
        return with_changes(source, changes)
    return load_scenario(parse_spec(source).source, changes)


def run(
    target: Target,
    transport: str | None = None,
    *,
    engine: str = "des",
    rollouts: int = 500,
    overrides: Overrides = None,
    seed: int | None = None,
) -> RunResult[Any] | UnmeasuredPoint:
    """The latency budget of one spec, as ``loopbudget run SPEC`` computes it (a fleet's
    load point when the scenario has agents or a rate limit)."""
    return summarize(_execute(target, transport, engine, rollouts, overrides, seed))


def compare(
    a: Target,
    b: Target,
    *,
    transports: tuple[str | None, str | None] = (None, None),
    engine: str = "des",
    rollouts: int = 500,
    overrides: Overrides = None,
    seed: int | None = None,
) -> Comparison:
    """b against baseline a on the same workload draws, as ``loopbudget compare A B``."""
    if not isinstance(transports, tuple | list) or len(transports) != 2:
        raise ScenarioError(f"transports = {transports!r}: expected a pair, e.g. ('http', 'ws')")
    runs = [
        _execute(target, transport, engine, rollouts, overrides, seed)
        for target, transport in zip((a, b), transports, strict=True)
    ]
    return compare_runs(*runs)


def records(
    target: Target,
    transport: str | None = None,
    *,
    rollouts: int = 500,
    overrides: Overrides = None,
    seed: int | None = None,
) -> RecordTables:
    """Per-rollout and per-turn records of a simulation (what ``run --out`` writes)."""
    outcome = _execute(target, transport, "des", rollouts, overrides, seed, keep_turns=True)
    return record_tables({outcome.spec.text: outcome})


@dataclass(frozen=True)
class LoadCurve:
    """A fleet at several load points: one result per point (``UnmeasuredPoint`` where a
    point has no means)."""

    points: list[FleetResult]

    def to_json(self) -> list[dict[str, Any]]:
        return [point.to_json() for point in self.points]

    def to_frame(self) -> pd.DataFrame:
        """One row per load point, with the columns of ``RunResult.to_frame``."""
        import pandas as pd

        return pd.DataFrame([point.flat() for point in self.points])


def load_curve(
    target: Target,
    transport: str | None = None,
    *,
    agents: list[int] | None = None,
    rates: list[float] | None = None,
    engine: str = "analytic",
    overrides: Overrides = None,
    seed: int | None = None,
) -> LoadCurve:
    """The fleet at closed populations (``agents``) or open arrival rates (``rates``, per
    second), from the analytic queueing network or, with ``engine="des"``, simulated."""
    spec, base = _target(target, transport, overrides, seed)
    chosen = parse_engine(text_or_none("engine", engine) or "")
    results = shared_load_curve(spec.text, base, spec.transport, chosen, agents, rates)
    recorded = tuple(assignments(overrides))
    return LoadCurve([replace(result, overrides=recorded) for result in results])


def capacity(
    target: Target,
    transport: str | None = None,
    *,
    slos: dict[str, float],
    max_agents: int = 100_000,
    overrides: Overrides = None,
    seed: int | None = None,
) -> CapacityResult:
    """The largest fleet meeting every SLO (``{"ttft_p95_s": 1.0}``): the analytic estimate
    checked by DES probes near it, as ``loopbudget capacity`` does (a minute or so)."""
    spec, base = _target(target, transport, overrides, seed)
    return search(base, spec.transport, _slos(slos), whole("max_agents", max_agents, 1))


def capacity_estimate(
    target: Target,
    transport: str | None = None,
    *,
    slos: dict[str, float],
    max_agents: int = 100_000,
    overrides: Overrides = None,
    seed: int | None = None,
) -> int:
    """The analytic model's capacity at the SLOs, before any fleet simulation (seconds)."""
    spec, base = _target(target, transport, overrides, seed)
    most = whole("max_agents", max_agents, 1)
    return SloEstimate(base, spec.transport).capacity(_slos(slos), most)


def sweep(
    file: str | Path, out: str | Path, *, workers: int | None = None, resume: bool = False
) -> pd.DataFrame:
    """Run a sweep file into the results directory ``out``; its rows as a DataFrame."""
    from sim.sweep.execute import run_sweep
    from sim.sweep.sweepfile import load_sweep

    source, directory = path_of("file", file), path_of("out", out)
    count = None if workers is None else whole("workers", workers, 0)
    if not isinstance(resume, bool):
        raise ScenarioError(f"resume = {resume!r}: expected True or False")
    run_sweep(load_sweep(source), directory, count, resume=resume, show_progress=False)
    return read_sweep(directory)


def read_sweep(directory: str | Path) -> pd.DataFrame:
    """The rows of a results directory, in point, transport and seed order."""
    from sim.sweep.store import read_results

    table: pd.DataFrame = read_results(path_of("directory", directory)).to_pandas()
    return table


def budget(*results: RunResult[Any]) -> pd.DataFrame:
    """Seconds per rollout of each stage (rows, in turn order), one column per result."""
    import pandas as pd

    for result in results:
        if not isinstance(result, RunResult):
            raise ScenarioError(f"budget: {type(result).__name__} is not a RunResult")
    columns = {r.spec: [r.budget_s[stage] for stage in STAGES] for r in results}
    return pd.DataFrame(columns, index=pd.Index([s.value for s in STAGES], name="stage"))


def _target(
    target: Target, transport: str | None, overrides: Overrides, seed: int | None
) -> tuple[Spec, Scenario]:
    """The spec (its transport: ``transport``, else the spec's, else http) and scenario."""
    target, transport = target_of(target), text_or_none("transport", transport)
    if isinstance(target, Scenario):
        spec = parse_spec(f"{target.name}:{transport or Transport.HTTP.value}")
    else:
        spec = parse_spec(target)
        if transport is not None:
            spec = parse_spec(f"{spec.source}:{transport}")
    return spec, scenario(target, overrides, seed)


def _execute(
    target: Target,
    transport: str | None,
    engine: str,
    rollouts: int,
    overrides: Overrides,
    seed: int | None,
    keep_turns: bool = False,
) -> Run:
    spec, loaded = _target(target, transport, overrides, seed)
    chosen = parse_engine(text_or_none("engine", engine) or "")
    count = rollouts_of(rollouts, chosen.value if not loaded.on_fleet else "fleet")
    recorded = tuple(assignments(overrides))
    return execute(spec, loaded, chosen, count, keep_turns, overrides=recorded)


def _slos(slos: dict[str, float]) -> list[Slo]:
    return [parse_slo(f"{metric}={limit}") for metric, limit in slos_of(slos).items()]
