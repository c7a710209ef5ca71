"""The organizations' rate limits in the analytic fleet, from one agent to many.

Each organization's agents share one token bucket per limit (``sim.des.rate_limit``);
the binding limit is the one whose rate admits the fewest rollouts.  What an
agent meets depends on how many of its organization's agents are in a rollout
(the others think between rollouts): with m of them active,

- m = 1: the agent is alone at the bucket, whose refill while it is away is not
  banked beyond the bucket's size: the chain on the bucket's level
  (``sim.analytic.fleet.bucket_chain``) gives each turn's refused seconds;
- m >= 2: the bucket is shared; once the agents ask for more than it refills,
  it admits them in turn, each admission costing its c / r and, when the
  waiting herd comes back a round trip and the first of their spreads after
  the unit is there, the part of that delay the bucket cannot bank (its level
  is capped at B: the round trip beyond tau = (B - 1) / r).  A turn then lasts
  at least a round: its own request and m - 1 average others.  A turn lasts
  the longer of that round and its length alone.

The agent's rollout runs at the pace of the moment: with the others active
independently (each a share e2e / (e2e + think) of the time, a fixed point),
its end-to-end time is the harmonic mean 1 / sum_m P(m) / E_m of the rollout's
length E_m in each state.  The time refused is what that adds to the
unlimited rollout (with the pools' waits at the admitted throughput).  A
refused attempt costs a round trip, the retry-after and half the spread; a
herd's member tries about once per bucket interval (less the round trip and
half the spread, rounded up to the resolution), so its 429s per request are
its time refused over that interval; a lone agent is refused once a request at
most.  Open arrivals above the cap have no steady state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analytic.agent.expectations import Expectation
from sim.analytic.agent.turn_table import CACHED, UNCACHED, TurnTable
from sim.analytic.agent.turn_time import DecodeTime
from sim.analytic.fleet.bucket_chain import Bucket, Gaps, refused_s

_BEFORE_GATEWAY = STAGES[: STAGES.index(Stage.VALIDATE)]
_FIXED_POINT_STEPS = 50
_SPREAD_NODES = 64


@dataclass(frozen=True)
class RateCap:
    """What the organizations' limits admit, and what a refused attempt costs."""

    rollouts_per_s: float
    """The fleet's rollouts per second at which the binding limit is reached."""
    binding: str
    """Which limit binds first: ``requests_per_minute`` or ``tokens_per_minute``."""
    attempt_s: float
    """Expected seconds between two attempts of a refused request in a herd."""


@dataclass(frozen=True)
class Limited:
    """One organization's agents under its limits at one population."""

    e2e_s: float
    refused_s_per_turn: float
    refused_per_request: float


@dataclass(frozen=True)
class LimitModel:
    """The binding limit as the agents of one organization meet it."""

    cap: RateCap
    reach: np.ndarray
    turn_s: np.ndarray
    """Each turn's request and tool, unlimited and uncontended (given reached)."""
    cost_s: np.ndarray
    """Each turn's request in seconds of the bucket's refill."""
    mean_cost_s: float
    alone_s: np.ndarray
    """Each turn's refused seconds with the agent alone at the bucket (given reached)."""
    alone_refusals: np.ndarray
    """Each turn's probability of a 429 with the agent alone."""
    tau_s: float
    rtt_s: float
    spread_s: float
    resolution_s: float
    think_s: float
    organizations: int

    def herd_waste_s(self, herd: int) -> float:
        """E[(RTT + the first of ``herd`` members' spread and rounding - tau)+]."""
        u = (np.arange(_SPREAD_NODES) + 0.5) / _SPREAD_NODES
        spread = self.spread_s * u[:, None] + self.resolution_s * u[None, :]
        first = np.sort(spread.ravel())
        survival = 1.0 - np.arange(first.size) / first.size
        tail = survival**herd
        delay = self.rtt_s + first
        return float(np.sum(tail * np.diff(np.r_[0.0, np.maximum(delay - self.tau_s, 0.0)])))

    def limited(self, turn_s: np.ndarray, agents: int) -> Limited:
        """The end-to-end time and refusals of ``agents`` (the whole closed population), each
        turn lasting ``turn_s`` unlimited (its request with the pools' waits, and its tool)."""
        turns = float(self.reach.sum())
        free_s = float(self.reach @ turn_s)
        alone_s = free_s + float(self.reach @ self.alone_s)
        agents = max(1, math.ceil(agents / self.organizations))
        active = np.arange(1, agents + 1)
        rounds = [
            float(
                self.reach
                @ np.maximum(
                    turn_s + self.alone_s,
                    self.cost_s + (m - 1) * self.mean_cost_s + m * self.herd_waste_s(m),
                )
            )
            for m in active[1:]
        ]
        lengths = np.array([alone_s, *rounds])
        if np.all(lengths == free_s):
            return Limited(free_s, 0.0, 0.0)
        from scipy.stats import binom  # imported where used: scipy.stats costs a second

        e2e_s = alone_s
        for _ in range(_FIXED_POINT_STEPS):
            share = e2e_s / (e2e_s + self.think_s) if self.think_s > 0 else 1.0
            weights = binom(agents - 1, share).pmf(active - 1)
            weights = weights / weights.sum()
            updated = 1.0 / float(weights @ (1.0 / lengths))
            if abs(updated - e2e_s) <= 1e-9 * e2e_s:
                break
            e2e_s = updated
        refused = max(0.0, e2e_s - free_s) / turns
        paces = weights / lengths
        herd = refused / self.cap.attempt_s
        lone = float(self.reach @ self.alone_refusals) / turns
        per_request = float(paces @ np.r_[lone, np.full(agents - 1, herd)]) / paces.sum()
        return Limited(e2e_s, refused, per_request)


def rate_cap(scenario: Scenario, e: Expectation) -> RateCap | None:
    """The cap the rate limits put on the fleet's throughput (None without a limit)."""
    r = scenario.rate_limit
    if not r.limits:
        return None
    per_organization = {}
    if r.requests_per_minute > 0:
        per_organization["requests_per_minute"] = r.requests_per_minute / 60.0 / e.turns
    if r.tokens_per_minute > 0:
        tokens = e.cached_prompt_tokens + e.uncached_prompt_tokens
        tokens += e.turns * scenario.workload.output_tokens.mean
        per_organization["tokens_per_minute"] = r.tokens_per_minute / 60.0 / tokens
    binding = min(per_organization, key=per_organization.__getitem__)
    interval_s = 1.0 / (per_organization[binding] * e.turns)
    step_s = r.retry_after_resolution_s
    # The herd's first arrival comes a round trip and a little spread after the bucket
    # refilled; it is admitted, and the rest are told the time to the next unit.
    away_s = scenario.network.rtt_ms * 1e-3 + r.retry_spread_ms * 1e-3 / 2.0
    told_s = step_s * max(1, math.ceil(max(0.0, interval_s - away_s) / step_s))
    return RateCap(
        rollouts_per_s=r.organizations * per_organization[binding],
        binding=binding,
        attempt_s=away_s + told_s,
    )


def limit_model(
    scenario: Scenario, e: Expectation, table: TurnTable, reprefill_s: np.ndarray | None = None
) -> LimitModel | None:
    """The binding limit of ``scenario`` as its agents meet it (None without a limit);
    ``reprefill_s``: each turn's prefill of the history its replica no longer holds."""
    r, cap = scenario.rate_limit, rate_cap(scenario, e)
    if cap is None:
        return None
    extra_s = np.zeros_like(table.reach) if reprefill_s is None else reprefill_s
    decode = DecodeTime(scenario.workload.output_tokens, scenario.inference.decode_tps)
    if cap.binding == "requests_per_minute":
        rate, cost = r.requests_per_minute / 60.0, np.ones_like(table.reach)
    else:
        rate = r.tokens_per_minute / 60.0
        cost = table.quantities[:, CACHED] + table.quantities[:, UNCACHED]
        cost = cost + scenario.workload.output_tokens.mean
    capacity = max(1.0, rate * r.burst_s)
    rtt_s = scenario.network.rtt_ms * 1e-3
    step_s = r.retry_after_resolution_s
    interval_s = float(table.reach @ cost) / float(table.reach.sum()) / rate
    bucket = Bucket(
        cost_s=cost / rate,
        tau_s=(capacity - 1.0) / rate,
        rtt_s=rtt_s,
        spread_s=r.retry_spread_ms * 1e-3,
        resolution_s=step_s,
        upload_s=table.stage_s(Stage.UPLOAD),
    )
    before = sum(table.stage_s(stage) for stage in _BEFORE_GATEWAY)
    request = table.request_s
    gaps = Gaps(
        before_s=np.asarray(before),
        after_s=request + extra_s - before - table.stage_s(Stage.DECODE),
        decode=decode,
        tool=table.tool_s,
        think_s=scenario.load.think_time_s,
        reach=table.reach,
        last=table.last,
    )
    alone, refusals = refused_s(bucket, gaps)
    return LimitModel(
        cap=cap,
        reach=table.reach,
        turn_s=request + extra_s + table.stage_s(Stage.TOOL),
        cost_s=bucket.cost_s,
        mean_cost_s=interval_s,
        alone_s=alone,
        alone_refusals=refusals,
        tau_s=bucket.tau_s,
        rtt_s=rtt_s,
        spread_s=bucket.spread_s,
        resolution_s=step_s,
        think_s=scenario.load.think_time_s.mean,
        organizations=r.organizations,
    )


def overload_reason(cap: RateCap | None, rollouts_per_s: float) -> str | None:
    """Why open arrivals above the cap have no steady state (None under it)."""
    if cap is None or rollouts_per_s < cap.rollouts_per_s:
        return None
    return (
        f"arrivals of {rollouts_per_s:g} rollouts/s are at or above the "
        f"{cap.rollouts_per_s:.3g} the organizations' rate limit ({cap.binding}) admits: "
        "the retries grow without bound"
    )
