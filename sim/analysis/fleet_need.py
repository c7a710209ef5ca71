"""What a fleet run will ask of the machine: its memory, its simulated turns, and whether its
measured window can measure anything, from the analytic engine's expectation of one rollout.

The costs per turn, per rollout and per rollout under way are ``sim.analysis.estimates``'s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.analysis.estimates import (
    BLOCK_BYTES_PER_TURN,
    FLEET_TURNS_PER_S,
    IN_FLIGHT_BYTES,
    RECORD_BYTES_PER_ROLLOUT,
    RECORD_BYTES_PER_TURN,
    TURNS_PER_REFUSAL,
    Need,
    check,
    check_rollout_length,
    longest_rollout_turns,
    mean_rollout_turns,
)
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.transports import Transport

if TYPE_CHECKING:
    from sim.analytic.agent.expectations import Expectation


def check_fleet(what: str, scenario: Scenario, transport: Transport) -> Need:
    """``check`` a fleet's estimate, and refuse a measured window too short to measure; the
    estimate."""
    need = fleet_need(what, scenario, transport)
    check(need)
    load = scenario.load
    if need.window_rollouts < 1.0:
        raise ScenarioError(
            f"{what}: expects {need.window_rollouts:.2g} rollouts to start in the "
            f"{load.duration_s:g} s measured window (load.duration_s) of a replication; at "
            "least 1 is needed: raise the load or load.duration_s"
        )
    return need


def fleet_need(what: str, scenario: Scenario, transport: Transport) -> Need:
    """A fleet: the rollouts under way at once (blocks and processes) and every replication's."""
    # The analytic engine loads for a fleet's estimate only: one agent's needs no expectation.
    from sim.analytic.agent.engine import expect
    from sim.analytic.fleet.demand import fleet_demand

    check_rollout_length(what, scenario)
    longest = longest_rollout_turns(scenario)
    load = scenario.load
    mean = mean_rollout_turns(scenario)
    e = expect(scenario, transport)
    e2e_s = e.e2e_s
    window_s = load.warmup_s + load.duration_s
    if load.kind == "closed":
        cycle_s = e2e_s + load.think_time_s.mean
        per_replication = load.agents * (window_s / cycle_s + 1.0)
        in_window = load.agents * load.duration_s / cycle_s
        in_flight = float(load.agents)
        who = f"{load.agents:,} agents"
    else:
        per_replication = load.rollouts_per_s * window_s + 1.0
        in_window = load.rollouts_per_s * load.duration_s
        offered = fleet_demand(scenario, transport).offered_load(load.rollouts_per_s)
        busiest = max(offered.values())
        queued = load.rollouts_per_s * e2e_s / (1.0 - busiest) if busiest < 1.0 else math.inf
        in_flight = min(per_replication, queued)
        who = f"{load.rollouts_per_s:,.6g} rollouts/s"
    rollouts = load.replications * per_replication
    refusals = _refusals(scenario, e, window_s) if load.kind == "closed" else 0.0
    working = (
        in_flight + BLOCK_ROLLOUTS
    ) * mean * BLOCK_BYTES_PER_TURN + in_flight * IN_FLIGHT_BYTES
    per_rollout = RECORD_BYTES_PER_ROLLOUT + mean * RECORD_BYTES_PER_TURN
    memory = working + rollouts * per_rollout
    memory_basis = f"{who}: {in_flight:,.0f} rollouts under way x {mean:,.1f} turns"
    turns_basis = (
        f"{who}, {load.replications} replications of {window_s:,.6g} s: "
        f"{rollouts:,.0f} rollouts x {mean:,.1f} turns"
    )
    if refusals:
        turns_basis += (
            f", and {refusals:,.3g} refused attempts under the rate limit at "
            f"{TURNS_PER_REFUSAL:g} turns each"
        )
    return Need(
        what,
        memory,
        memory_basis,
        rollouts * mean + refusals * TURNS_PER_REFUSAL,
        turns_basis,
        longest,
        FLEET_TURNS_PER_S,
        in_window,
        worker_bytes=working + per_replication * per_rollout,
    )


def _refusals(scenario: Scenario, e: Expectation, window_s: float) -> float:
    """The 429s of every replication of a closed fleet: the agents beyond what the rate
    limits' cap keeps cycling each retry once per attempt interval (none under the cap)."""
    from sim.analytic.fleet.rate_limit import rate_cap

    cap = rate_cap(scenario, e)
    if cap is None:
        return 0.0
    load = scenario.load
    cycling = cap.rollouts_per_s * (e.e2e_s + load.think_time_s.mean)
    waiting = max(0.0, load.agents - cycling)
    return load.replications * waiting * window_s / cap.attempt_s
