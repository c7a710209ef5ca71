"""What the dashboard's views show, as plain tables computed from the engines.

Every function here is pure: a validated scenario in, summaries or a
``pandas.DataFrame`` out.  The first transport of a selection is the baseline
the others are compared with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from models.loading import with_changes
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analysis.metrics import Metric
from sim.analysis.results import Comparison, RunResult
from sim.analysis.run import AnalyticRun, Engine, FleetRun, Run, SimulatedRun, Spec, execute
from sim.analysis.summary import agent_result, compare
from sim.analysis.verdict import verdict as comparison_verdict
from sim.analytic.agent.engine import expect
from sim.capacity.objectives import with_agents
from sim.dashboard.knobs import DECODE, DECODE_MARKS_TPS, TOOL_CALLS
from sim.dashboard.rescale import with_decode_tps, with_tool_calls
from sim.turn.records import TurnRecords
from sim.turn.transports import Transport

DEFAULT_TRANSPORTS = (Transport.HTTP, Transport.WS)
TABLE_ROW_PX = 35
"""Height of one row of ``st.dataframe`` (its default row height)."""


@dataclass(frozen=True)
class Results:
    """Summaries of one scenario under several transports, and their comparisons."""

    engine: Engine
    rollouts: int
    summaries: dict[str, RunResult[None]]
    """Transport name -> the run's result (``sim.analysis.summary.summarize``)."""
    comparisons: dict[str, Comparison]
    """Transport name -> the baseline compared with it (not the baseline)."""

    @property
    def baseline(self) -> str:
        return next(iter(self.summaries))


def single_agent(scenario: Scenario) -> Scenario:
    """The scenario for one agent without contention or rate limits (what every view but the
    load view shows)."""
    if not scenario.on_fleet:
        return scenario
    unlimited = ["rate_limit.requests_per_minute=0", "rate_limit.tokens_per_minute=0"]
    return with_changes(with_agents(scenario, 1), unlimited)


def run(scenario: Scenario, transport: Transport, engine: Engine, rollouts: int = 1) -> Run:
    """One run of ``scenario`` under ``transport``."""
    spec = Spec(f"{scenario.name}:{transport}", scenario.name, transport)
    return execute(spec, scenario, engine, rollouts)


def results_of(runs: Sequence[Run]) -> Results:
    """Summaries of runs of one scenario (same seed), each compared with the first."""
    agents = [_one_agent(r) for r in runs]
    baseline, *others = agents
    return Results(
        engine=baseline.engine,
        rollouts=baseline.rollouts,
        summaries={r.spec.transport.value: agent_result(r) for r in agents},
        comparisons={r.spec.transport.value: compare(baseline, r) for r in others},
    )


def _one_agent(run: Run) -> SimulatedRun | AnalyticRun:
    if isinstance(run, FleetRun):
        raise ValueError(f"{run.spec.text}: a fleet run in a view of one agent")
    return run


def evaluate(scenario: Scenario, transports: Sequence[Transport]) -> Results:
    """Expected values (analytic engine) under each transport, compared with the first."""
    return results_of([run(scenario, t, Engine.ANALYTIC) for t in transports])


def budget_frame(results: Results) -> pd.DataFrame:
    """One row per (transport, stage) on the critical path: seconds, share, and where the
    stage's segment starts and ends in a bar stacked in stage order."""
    rows = []
    for transport, summary in results.summaries.items():
        start_s = 0.0
        for order, stage in enumerate(STAGES):
            seconds = summary.budget_s[stage]
            if seconds > 0:
                share = summary.budget_share[stage]
                row = _stage_row(stage, order, transport=transport, seconds=seconds, share=share)
                rows.append({**row, "start_s": start_s, "end_s": start_s + seconds})
                start_s += seconds
    return pd.DataFrame(rows)


def budget_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The budget frame as a table: one row per stage, seconds and share per transport."""
    wide = frame.pivot_table(
        index=["order", "stage_label"], columns="transport", values=["seconds", "share"], sort=False
    )
    columns = {}
    for transport in dict.fromkeys(frame["transport"]):
        columns[f"{transport} (s)"] = wide[("seconds", transport)]
        columns[f"{transport} share"] = wide[("share", transport)]
    return pd.DataFrame(columns).fillna(0.0).droplevel("order").rename_axis("stage")


def verdict(comparison: Comparison) -> str:
    """The CLI's one-sentence verdict, with the sides named by their transports."""
    return comparison_verdict(
        comparison, comparison.a.transport.value, comparison.b.transport.value
    )


def amdahl_frame(
    scenario: Scenario, transports: Sequence[Transport], points: int = 12
) -> pd.DataFrame:
    """Expected end-to-end reduction against decode speed, 30..5,000 tokens/s (log spaced).

    The published speeds are among the points.  The curve does not depend on
    the scenario's own decode speed, only on the shape of its distribution.
    """
    speeds = np.unique([*np.geomspace(DECODE.low, DECODE.high, points), *DECODE_MARKS_TPS])
    baseline, *others = transports
    rows = []
    for speed in speeds:
        variant = with_decode_tps(scenario, float(speed))
        e2e_a = expect(variant, baseline).e2e_s
        for transport in others:
            reduction = 1.0 - expect(variant, transport).e2e_s / e2e_a
            rows.append(
                {
                    "decode_tps": float(speed),
                    "transport": transport.value,
                    "e2e_reduction": reduction,
                }
            )
    return pd.DataFrame(rows)


def amdahl_point(results: Results, decode_tps: float) -> pd.DataFrame:
    """The scenario's own point on the Amdahl curve, per compared transport."""
    rows = [
        {
            "decode_tps": decode_tps,
            "transport": transport,
            "e2e_reduction": c.reduction(Metric.E2E_REDUCTION),
        }
        for transport, c in results.comparisons.items()
    ]
    return pd.DataFrame(rows)


def scaling_frame(
    scenario: Scenario, transports: Sequence[Transport], points: int = 10
) -> pd.DataFrame:
    """Expected API work and end-to-end time against tool calls per rollout (1..100), per transport.

    The curve does not depend on the scenario's own tool-call distribution.
    """
    rows = []
    for calls in np.unique(np.geomspace(TOOL_CALLS.low, TOOL_CALLS.high, points).round()):
        variant = with_tool_calls(scenario, int(calls))
        for transport in transports:
            expectation = expect(variant, transport)
            rows.append(
                {
                    "tool_calls": int(calls),
                    "transport": transport.value,
                    "api_cpu_s": expectation.api_cpu_s,
                    "e2e_s": expectation.e2e_s,
                }
            )
    return pd.DataFrame(rows)


def table_height_px(rows: int) -> int:
    """A table's height showing every row and its header, without a scroll box."""
    return (rows + 1) * TABLE_ROW_PX + 3


def rollout_frame(
    scenario: Scenario,
    transports: Sequence[Transport],
    rollout: int = 0,
    turns: tuple[int, int] | None = None,
) -> pd.DataFrame:
    """The stage spans of one simulated rollout under each transport (same seed, same draws).

    Times are seconds since the start of the first shown turn of ``turns``
    (inclusive range of turn indices; all turns if None).  Post-inference work
    done off the critical path is its own row, ``overlapped`` True.
    """
    rows = []
    post = STAGES.index(Stage.POST)
    decode = STAGES.index(Stage.DECODE)
    for transport in transports:
        records = simulate_one(scenario, transport, rollout)
        first, last = turns if turns is not None else (0, int(records.turn_index.max()))
        shown = (records.turn_index >= first) & (records.turn_index <= last)
        if not shown.any():
            continue
        origin = records.start_at_s[shown].min()
        ends = records.start_at_s[:, None] + np.cumsum(records.stage_s, axis=1) - origin
        for row in np.flatnonzero(shown):
            turn = int(records.turn_index[row])
            for order, stage in enumerate(STAGES):
                duration = records.stage_s[row, order]
                if duration > 0:
                    rows.append(
                        _span(stage, order, transport.value, turn, ends[row, order], duration)
                    )
            overlapped = records.post_overlapped_s[row]
            if overlapped > 0:
                end = ends[row, decode] + overlapped
                row_label = f"{transport.value}: post (overlapped)"
                rows.append(_span(Stage.POST, post, row_label, turn, end, overlapped))
    return pd.DataFrame(rows)


def simulate_one(scenario: Scenario, transport: Transport, rollout: int) -> TurnRecords:
    """Per-turn records of rollout number ``rollout`` (its draws do not depend on later ones)."""
    spec = Spec(f"{scenario.name}:{transport}", scenario.name, transport)
    turns = execute(spec, scenario, Engine.DES, rollout + 1, keep_turns=True).turn_records()
    mine = turns.rollout == rollout
    return TurnRecords(
        **{name: getattr(turns, name)[mine] for name in TurnRecords.__dataclass_fields__}
    )


def _stage_row(stage: Stage, order: int, **values: Any) -> dict[str, Any]:
    return {"stage": stage.value, "stage_label": stage.label, "order": order, **values}


def _span(
    stage: Stage, order: int, row: str, turn: int, end_s: float, duration_s: float
) -> dict[str, Any]:
    return _stage_row(
        stage,
        order,
        row=row,
        turn=turn,
        start_s=float(end_s - duration_s),
        end_s=float(end_s),
        duration_ms=float(duration_s * 1000),
    )
