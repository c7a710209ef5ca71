"""The discrete-event engine: one agent runs rollouts back to back in SimPy.

Stages that use no contended resource are coalesced: a turn is two timeouts
(the request, then the tool), while every stage's duration is still recorded.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import simpy

from models.costs import stage_costs
from models.scenario import Scenario
from models.stages import STAGES
from sim.engine.connections import new_connection
from sim.engine.draws import draw_turns
from sim.engine.records import RolloutRecords, TurnRecords, concatenate
from sim.engine.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.engine.transports import Transport, turn_work

Progress = Callable[[int], None]


def simulate(
    scenario: Scenario,
    transport: Transport,
    rollouts: int,
    keep_turns: bool = False,
    progress: Progress | None = None,
) -> RolloutRecords:
    """Simulate ``rollouts`` rollouts; per-turn rows are kept only if ``keep_turns``."""
    parts = []
    for block, first in enumerate(range(0, rollouts, BLOCK_ROLLOUTS)):
        count = min(BLOCK_ROLLOUTS, rollouts - first)
        parts.append(_simulate_block(scenario, transport, block, count, keep_turns))
        if progress is not None:
            progress(count)
    return concatenate(parts)


def _simulate_block(
    scenario: Scenario, transport: Transport, block: int, rollouts: int, keep_turns: bool
) -> RolloutRecords:
    turns = draw_turns(scenario, block, rollouts)
    cold_work, warm_work = turn_work(scenario, transport, turns)
    cold_costs = stage_costs(scenario, cold_work)
    warm_costs = stage_costs(scenario, warm_work)
    cold_request_s = cold_costs.request_s.tolist()
    warm_request_s = warm_costs.request_s.tolist()
    tool_s = turns.tool_s.tolist()
    offsets = turns.offsets.tolist()
    faults = stream(scenario.seed, block, Draw.CONNECTION_FAULTS)

    env = simpy.Environment()
    cold = np.zeros(turns.count)
    start_at_s = np.empty(turns.count)
    e2e_s = np.empty(rollouts)

    def agent():
        for rollout in range(rollouts):
            connection = new_connection(scenario, transport, faults)
            began_s = env.now
            for turn in range(offsets[rollout], offsets[rollout + 1]):
                start_at_s[turn] = env.now
                is_cold = connection.is_cold(env.now)
                cold[turn] = is_cold
                yield env.timeout(cold_request_s[turn] if is_cold else warm_request_s[turn])
                connection.release(env.now)
                if tool_s[turn] > 0:
                    yield env.timeout(tool_s[turn])
            e2e_s[rollout] = env.now - began_s

    env.process(agent())
    env.run()

    costs = cold_costs.select(warm_costs, cold)
    stage_matrix = np.column_stack([costs.stage_s[stage] for stage in STAGES])
    starts = turns.offsets[:-1]
    turn_records = None
    if keep_turns:
        turn_records = TurnRecords(
            rollout=np.repeat(np.arange(rollouts) + block * BLOCK_ROLLOUTS, np.diff(turns.offsets)),
            turn_index=turns.turn_index,
            start_at_s=start_at_s,
            cold=cold,
            stage_s=stage_matrix,
            ttft_s=costs.ttft_s,
            api_cpu_s=costs.api_cpu_s,
            post_overlapped_s=costs.post_overlapped_s,
        )
    return RolloutRecords(
        e2e_s=e2e_s,
        turns=np.diff(turns.offsets).astype(float),
        cold_turns=np.add.reduceat(cold, starts),
        stage_s=np.add.reduceat(stage_matrix, starts, axis=0),
        ttft_sum_s=np.add.reduceat(costs.ttft_s, starts),
        api_cpu_s=np.add.reduceat(costs.api_cpu_s, starts),
        safety_cpu_s=np.add.reduceat(costs.safety_cpu_s, starts),
        turn_ttft_s=costs.ttft_s,
        turn_records=turn_records,
    )
