"""The fleet's KV residency by Che's approximation: one characteristic time per replica.

Each replica holds the history of the sessions routed to it.  Under LRU an
entry stays while less than a characteristic time T has passed since its
session last wrote it, and T is what fills the replica: with L live sessions
and rollouts ending at a rate of E per second, spread over R replicas,

    C = (L / R) S_live (E[min(X, T)] + P(X < T) (tau - E[X])) / tau
        + (E / R) min(T, TTL) S_end,

where S_live is a live session's mean history, tau its mean turn period and X
its tool gap: an entry is held through the first T of each gap (the renewal
form of Che's approximation) and, when the next request finds it, through that
request; S_end is the history a finished rollout leaves behind (dead entries,
kept until T or the time-to-live passes).  A turn then finds its
history when it lands on its last replica (always for affinity and consistent
hashing, 1/R otherwise) and its gap is within min(T, TTL).  Not counted: the
stale copies round-robin and random routing leave on other replicas (they
crowd the memory and give partial hits), and queueing's longer rollouts.
The error against the DES is stated in docs/load.md.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq

from models.kv_cache import Routing
from models.scenario import Scenario
from models.workload import rollout_turns
from sim.analytic.agent.expectations import Expectation
from sim.analytic.agent.expected_draws import tool_mixture
from sim.turn.transports import Transport

_KEEPS_SESSION = (Routing.AFFINITY, Routing.CONSISTENT_HASH)


def history_tokens(scenario: Scenario) -> tuple[float, float]:
    """(mean history of a live session per turn, history a finished rollout leaves), tokens,
    over the distribution of tool calls at the mean output and tool-output sizes."""
    w = scenario.workload
    first, out, tool = w.first_message_tokens, w.output_tokens.mean, w.mean_tool_output_tokens()
    calls, weights = w.tool_calls_per_rollout.support()
    turns = rollout_turns(calls)
    summed = calls * first + out * calls * (calls + 1) / 2 + tool * (calls - 1) * calls / 2
    left = first + turns * out + calls * tool
    return float(weights @ summed / (weights @ turns)), float(weights @ left)


def characteristic_time_s(scenario: Scenario, e: Expectation) -> float:
    """T of every replica (``inf``: the time-to-live empties memory before it fills)."""
    load, kv = scenario.load, scenario.kv_cache
    cycle_s = e.e2e_s + (load.think_time_s.mean if load.kind == "closed" else 0.0)
    ends_per_s = load.agents / cycle_s if load.kind == "closed" else load.rollouts_per_s
    live = ends_per_s * e.e2e_s
    replicas = scenario.capacity.inference_replicas
    capacity = scenario.inference.kv_capacity_tokens - (
        scenario.workload.instructions_tokens + scenario.workload.tool_definitions_tokens
    )
    live_tokens, left_tokens = history_tokens(scenario)
    period_s = e.e2e_s / e.turns
    gap = tool_mixture(scenario.workload.tools, "time_s")

    mean_gap_s = gap.mean

    def overfill(time_s: float) -> float:
        idle_s = mean_gap_s - float(gap.partial_expectation(time_s))
        in_use_s = (1.0 - float(gap.survival(time_s))) * max(0.0, period_s - mean_gap_s)
        held = live / replicas * live_tokens * (idle_s + in_use_s) / period_s
        dead = ends_per_s / replicas * min(time_s, kv.ttl_s) * left_tokens
        return held + dead - capacity

    if overfill(kv.ttl_s) <= 0:
        return math.inf
    if overfill(0.0) >= 0:
        return 0.0
    return float(brentq(overfill, 0.0, kv.ttl_s, xtol=1e-9))


def fleet_history_resident(scenario: Scenario, transport: Transport, e: Expectation) -> float:
    """P(a turn k >= 1 finds its whole history) in the fleet of ``scenario``."""
    kv = scenario.kv_cache
    within_s = min(characteristic_time_s(scenario, e), kv.ttl_s)
    survives = 1.0 - float(tool_mixture(scenario.workload.tools, "time_s").survival(within_s))
    replicas = scenario.capacity.inference_replicas
    same = (
        1.0
        if kv.routing(transport.is_websocket) in _KEEPS_SESSION or replicas == 1
        else 1.0 / replicas
    )
    return same * survives
