"""The analytic engine: closed-form expected value of every stage, one agent, no contention.

It evaluates the same cost functions as the DES on expected per-turn work.
Every cost is linear in the work except the parallel-safety excess
(``max(0, parallel - prefill)``), which is evaluated at the expected work, and the
WebSocket cache-loss probability, which uses expected turn durations.  HTTP
render and safety work at turn k is proportional to the context, which grows
linearly with k, so their total over a rollout of n turns grows with n squared;
WebSocket processes only each turn's new input, so its total grows with n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.costs import TurnCosts, stage_costs
from models.scenario import Scenario
from models.stages import STAGES
from sim.engine.transports import Transport, turn_work
from sim.engine.turns import Turns, history


@dataclass(frozen=True)
class Expectation:
    """Expected values per rollout."""

    stage_s: np.ndarray
    """Expected seconds per stage per rollout, in ``STAGES`` order."""
    turns: float
    cold_turns: float
    ttft_sum_s: float
    api_cpu_s: float
    safety_cpu_s: float

    @property
    def e2e_s(self) -> float:
        return float(self.stage_s.sum())

    @property
    def ttft_mean_s(self) -> float:
        """Mean TTFT over turns: E[sum of TTFTs] / E[turns], as the DES pools it."""
        return self.ttft_sum_s / self.turns


def expect(scenario: Scenario, transport: Transport) -> Expectation:
    """Expected per-rollout budget of ``scenario`` under ``transport``."""
    calls, probability = scenario.workload.tool_calls_per_rollout.support()
    turns = expected_turns(scenario, calls)
    cold_work, warm_work = turn_work(scenario, transport, turns)
    warm = stage_costs(scenario, warm_work)
    cold_probability = _cold_probability(scenario, transport, turns, warm)
    costs = stage_costs(scenario, cold_work.blend(warm_work, cold_probability))
    starts = turns.offsets[:-1]

    def per_rollout(values: np.ndarray) -> float:
        return float(probability @ np.add.reduceat(values, starts))

    return Expectation(
        stage_s=np.array([per_rollout(costs.stage_s[stage]) for stage in STAGES]),
        turns=float(probability @ (calls + 1)),
        cold_turns=per_rollout(cold_probability),
        ttft_sum_s=per_rollout(costs.ttft_s),
        api_cpu_s=per_rollout(costs.api_cpu_s),
        safety_cpu_s=per_rollout(costs.safety_cpu_s),
    )


def expected_turns(scenario: Scenario, calls: np.ndarray) -> Turns:
    """Expected per-turn inputs of one rollout for each tool-call count in ``calls``."""
    w = scenario.workload
    total = int(calls.sum()) + calls.size
    weights = np.array([tool.weight for tool in w.tools])
    weights = weights / weights.sum()
    tool_s = np.full(total, float(weights @ [tool.time_s.mean for tool in w.tools]))
    tool_output = np.full(total, float(weights @ [tool.output_tokens.mean for tool in w.tools]))
    final_turns = np.cumsum(calls.astype(np.int64) + 1) - 1
    tool_s[final_turns] = 0.0
    tool_output[final_turns] = 0.0
    output = np.full(total, w.output_tokens.mean)
    grown = history(calls, output, tool_output, w.first_message_tokens, w.output_items_per_turn)
    return Turns(
        **grown,
        fixed_tokens=w.instructions_tokens + w.tool_definitions_tokens,
        output_tokens=output,
        decode_s_per_token=np.full(total, scenario.inference.decode_tps.mean_reciprocal()),
        tool_s=tool_s,
        render_hit=np.full(total, scenario.api.render_cache_hit_prob),
    )


def _cold_probability(
    scenario: Scenario, transport: Transport, turns: Turns, warm: TurnCosts
) -> np.ndarray:
    first = turns.turn_index == 0
    if not transport.is_websocket:
        weights = np.array([tool.weight for tool in scenario.workload.tools])
        idle_s = scenario.client.keepalive_idle_s
        expired = np.array([tool.time_s.survival(idle_s) for tool in scenario.workload.tools])
        return np.where(first, 1.0, float(weights @ expired / weights.sum()))
    connection = scenario.connection
    interval_s = np.concatenate([[0.0], warm.turn_s[:-1]])
    elapsed_s = np.cumsum(interval_s)
    starts_s = elapsed_s - np.repeat(elapsed_s[turns.offsets[:-1]], np.diff(turns.offsets))
    previous_starts_s = np.concatenate([[0.0], starts_s[:-1]])
    survived_drop = np.exp(-connection.ws_drops_per_hour / 3600.0 * interval_s)
    lifetime_s = connection.ws_lifetime_s
    rotated = np.floor(starts_s / lifetime_s) > np.floor(previous_starts_s / lifetime_s)
    cold = 1.0 - survived_drop * (1.0 - rotated)
    return np.where(first, 1.0, cold)
