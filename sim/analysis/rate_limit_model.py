"""The organizations' rate limits in the analytic fleet: a cap on throughput and its wait.

A token bucket admits at most its limit's rate, so the fleet's rollouts per
second are at most ``organizations x min(requests/s / requests per rollout,
tokens/s / tokens per rollout)``.  Below that the model adds no delay (a
bucket of ``burst_s`` absorbs the fluctuations of a load under its rate, which
the DES shows for loads well below it).  Above it a closed population of N
agents cycles at exactly the cap: by Little's law each rollout's cycle is
``N / cap``, the pools see the population whose unlimited throughput is the
cap, and the rest of the cycle is spent refused, in the retry stage.  Open
arrivals above the cap have no steady state.

Each refused attempt costs a round trip (the 429 back, the next attempt's head
out), the retry-after and on average half the retry spread.  A waiting client
is told the time until the next token; taking the time of refusal uniform over
the bucket's interval between two requests, that is half the interval, rounded
up to the retry-after's resolution (a whole interval when the resolution is
coarser).  The DES's herd makes refusals cluster just before a token, so this
undercounts refusals at millisecond resolution (``docs/load.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.scenario import Scenario
from sim.engine.expectations import Expectation


@dataclass(frozen=True)
class RateCap:
    """What the organizations' limits admit, and what a refused attempt costs."""

    rollouts_per_s: float
    """The fleet's rollouts per second at which the binding limit is reached."""
    binding: str
    """Which limit binds first: ``requests_per_minute`` or ``tokens_per_minute``."""
    attempt_s: float
    """Expected seconds between two attempts of a refused request."""


def rate_cap(scenario: Scenario, e: Expectation) -> RateCap | None:
    """The cap the rate limits put on the fleet (None without a limit)."""
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
    binding = min(per_organization, key=per_organization.get)
    interval_s = 1.0 / (per_organization[binding] * e.turns)
    step_s = r.retry_after_resolution_s
    told_s = step_s if step_s >= interval_s else step_s * math.ceil(0.5 * interval_s / step_s)
    return RateCap(
        rollouts_per_s=r.organizations * per_organization[binding],
        binding=binding,
        attempt_s=scenario.network.rtt_ms * 1e-3 + told_s + r.retry_spread_ms * 1e-3 / 2.0,
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
