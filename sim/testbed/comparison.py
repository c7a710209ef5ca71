"""Both sides of a run in the same terms: the testbed's measurements and the simulation's records.

The measured budget takes each stage from where it happened: the client's
build, connect and upload (``up_s``), failed continuations, the server's
stages as it logged them and its queue waits, what the server's timers and
own work added beyond them (``server_overhead_s``, which the model has not),
the download and the tools.  The simulation runs the same scenario with the
measured client and network on the same seeded rollouts.
"""

from __future__ import annotations

import math

import numpy as np

from models.costs import stage_costs
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.testbed.observe import TurnSplit
from sim.testbed.records import RolloutRecord, e2es_s, turn_ttfts_s
from sim.testbed.results import Key, Side
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport, turn_work

CLIENT_SIDE = "client_build+connect+upload"
"""The measured client stages before the server takes a request, as one budget row."""
_CLIENT_STAGES = (Stage.CLIENT_BUILD, Stage.CONNECT, Stage.UPLOAD)


def measured_side(rollouts: list[RolloutRecord], splits: list[TurnSplit]) -> Side:
    """Statistics and the per-stage budget of what the driver and the server recorded."""
    e2e, ttft = e2es_s(rollouts), turn_ttfts_s(rollouts)
    count = len(rollouts)
    budget = dict.fromkeys(_budget_rows(), 0.0)
    for s in splits:
        budget[CLIENT_SIDE] += s.up_s
        budget[Stage.RECOVER.value] += s.turn.recover_s
        for stage, seconds in s.server["stage_s"].items():
            budget[stage] += seconds
        budget[Stage.QUEUE.value] += sum(s.server["wait_s"].values())
        budget[Key.SERVER_OVERHEAD_S.value] += s.server_s - s.emulated_s
        budget[Stage.DOWNLOAD.value] += s.down_s
    budget[Stage.TOOL.value] = sum(t.tool_s for r in rollouts for t in r.turns)
    recoveries = sum(r.recoveries for r in rollouts)
    recovered_s = [t.request_s for r in rollouts for t in r.turns if t.recoveries]
    return Side(
        e2e_mean_s=float(e2e.mean()),
        e2e_p95_s=float(np.percentile(e2e, 95)),
        ttft_mean_s=float(ttft.mean()),
        ttft_p95_s=float(np.percentile(ttft, 95)),
        connections_per_rollout=sum(r.new_connections for r in rollouts) / count,
        cache_misses_per_rollout=recoveries / count,
        recovery_s=float(np.mean(recovered_s)) if recovered_s else math.nan,
        budget_s={row: seconds / count for row, seconds in budget.items()},
        requests_per_rollout=sum(len(r.turns) for r in rollouts) / count,
    )


def simulated_records(scenario: Scenario, transport: Transport, rollouts: int) -> RolloutRecords:
    """The DES of the same seeded rollouts, turns kept (to count failed continuations)."""
    return simulate(scenario, transport, rollouts, keep_turns=True)


def simulated_side(records: RolloutRecords) -> Side:
    """The simulation's statistics in the measured side's terms (failed continuations are
    counted where the records kept their turns)."""
    turns = records.turn_records
    recoveries, recovery_s = 0, math.nan
    if turns is not None:
        recovered = turns.stage_s[:, STAGE_COLUMN[Stage.RECOVER]] > 0
        recoveries = int(recovered.sum())
        if recoveries:
            request_s = turns.stage_s.sum(axis=1) - turns.stage_s[:, STAGE_COLUMN[Stage.TOOL]]
            recovery_s = float(request_s[recovered].mean())
    per_stage = records.stage_s.mean(axis=0)
    budget = dict.fromkeys(_budget_rows(), 0.0)
    for stage in STAGES:
        row = CLIENT_SIDE if stage in _CLIENT_STAGES else stage.value
        budget[row] += float(per_stage[STAGE_COLUMN[stage]])
    return Side(
        e2e_mean_s=float(records.e2e_s.mean()),
        e2e_p95_s=float(np.percentile(records.e2e_s, 95)),
        ttft_mean_s=float(records.turn_ttft_s.mean()),
        ttft_p95_s=float(np.percentile(records.turn_ttft_s, 95)),
        connections_per_rollout=float(records.cold_turns.mean()),
        cache_misses_per_rollout=recoveries / records.count if turns is not None else math.nan,
        recovery_s=recovery_s,
        budget_s=budget,
        requests_per_rollout=float(records.turns.mean()),
    )


def recovered_turn_cost_s(
    scenario: Scenario, transport: Transport, rollouts: list[RolloutRecord]
) -> float:
    """The simulation's cost of the very turns that recovered on the testbed: each one's
    request under the model's cache-loss variant (failed attempt, new connection, the
    whole history rebuilt), so both sides price the same turns, whichever a rotation hit."""
    recovered = [(r.rollout, t.turn) for r in rollouts for t in r.turns if t.recoveries]
    if not recovered:
        return math.nan
    turns = draw_turns(scenario, 0, max(rollout for rollout, _ in recovered) + 1)
    cold, _ = turn_work(scenario, transport, turns)
    request_s = stage_costs(scenario, cold).request_s
    rows = [int(turns.offsets[rollout]) + turn for rollout, turn in recovered]
    return float(np.mean(request_s[rows]))


def _budget_rows() -> list[str]:
    rows = [CLIENT_SIDE]
    rows += [s.value for s in STAGES if s not in _CLIENT_STAGES and s is not Stage.DOWNLOAD]
    rows.insert(rows.index(Stage.POST.value) + 1, Key.SERVER_OVERHEAD_S.value)
    return [*rows[:-1], Stage.DOWNLOAD.value, rows[-1]]
