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
out), the retry-after and on average half the retry spread.  The clients
refused together are told the moment the bucket next holds a unit; they come
back a round trip and some spread after it, the first is admitted and the
rest are told the time to the next unit: the bucket's interval between two
admissions less that round trip and half the spread, rounded up to the
retry-after's resolution.  So a waiting client tries about once per interval
(or once per resolution, when that is coarser), and the 429s per request are
the time refused over that attempt interval (``docs/load.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.scenario import Scenario
from sim.analytic.agent.expectations import Expectation


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


def overload_reason(cap: RateCap | None, rollouts_per_s: float) -> str | None:
    """Why open arrivals above the cap have no steady state (None under it)."""
    if cap is None or rollouts_per_s < cap.rollouts_per_s:
        return None
    return (
        f"arrivals of {rollouts_per_s:g} rollouts/s are at or above the "
        f"{cap.rollouts_per_s:.3g} the organizations' rate limit ({cap.binding}) admits: "
        "the retries grow without bound"
    )
