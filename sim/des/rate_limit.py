"""The fleet's rate limiter: token buckets per organization, answering 429 with retry-after.

Each organization has a request bucket and a token bucket (``models.rate_limit``).
A bucket refills continuously at its limit's rate up to ``burst_s`` seconds of
it and starts full.  A request arriving at the gateway is admitted when every
bucket it draws on holds at least one unit (a request; a token), and then
takes what it costs: one request, and its whole prompt and output from the
token bucket, which may go below zero (the token limit is checked as gateways
that count a request's tokens once it is known do: while the budget is not
spent, admit, then charge).  So the admitted rates never exceed the limits
over time, and a large request waits no longer than a small one.  Otherwise
the gateway answers 429 with the wait until every bucket holds a unit again,
rounded up to ``retry_after_resolution_s``, not counting the others waiting
too: every waiting client comes back at about the same moment and all but the
first are refused again (the herd a retry-after produces).

A refused attempt holds no pool.  The 429 takes half a round trip back; the
client waits the retry-after (the SDK sleeps it when it is under its
two-minute cap, and the agent loop is assumed to wait it out too once the SDK
has given up, as coding agents do on rate-limit errors), plus a uniform draw
of up to ``retry_spread_ms`` (its timer, scheduling and the network), and
sends the request again.  The gateway decides when the new attempt's head
arrives, half a round trip later, and on admission the rest of its upload
follows.  That time is the turn's ``retry`` stage.  Refused attempts do not
draw on the buckets.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

import numpy as np

from models.scenario import Scenario
from sim.des.kernel import Environment, Event

_SLACK = 1e-9
"""A bucket refilled to within this of a unit admits (rounding of the refill)."""


class _Bucket:
    """One token bucket: ``rate_per_s`` refill, ``capacity`` held at most (one unit at least,
    so a limit under one request per ``burst_s`` still admits)."""

    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.rate_per_s = per_minute / 60.0
        self.capacity = max(1.0, self.rate_per_s * burst_s)
        self.level = self.capacity
        self.updated_s = 0.0

    def refill(self, now_s: float) -> None:
        self.level = min(self.capacity, self.level + self.rate_per_s * (now_s - self.updated_s))
        self.updated_s = now_s

    def wait_s(self) -> float:
        """Seconds until the bucket holds one unit again."""
        return max(0.0, 1.0 - self.level - _SLACK) / self.rate_per_s


class RateLimiter:
    """Every organization's buckets, and what the fleet's requests met at the gateway."""

    def __init__(
        self,
        scenario: Scenario,
        env: Environment,
        window: tuple[float, float],
        spread: np.random.Generator,
    ) -> None:
        r = scenario.rate_limit
        self.env, self.spread = env, spread
        self.spread_s = r.retry_spread_ms * 1e-3
        self.window_start_s, self.window_end_s = window
        self.resolution_s = r.retry_after_resolution_s
        self.half_rtt_s = scenario.network.rtt_ms * 1e-3 / 2.0
        limits = [(False, r.requests_per_minute), (True, r.tokens_per_minute)]
        self.buckets = [
            [
                (counts_tokens, _Bucket(per_minute, r.burst_s))
                for counts_tokens, per_minute in limits
                if per_minute
            ]
            for _ in range(r.organizations)
        ]
        """Per organization: (whether the bucket counts tokens rather than requests, it)."""
        self.admitted = 0
        """Requests admitted inside the measured window (every organization)."""
        self.refused = 0
        """429 answers inside the measured window."""

    def retry_after_s(self, organization: int, tokens: float) -> float:
        """0 and the request is admitted (its costs taken), else the retry-after it is sent."""
        now_s = self.env.now
        buckets = self.buckets[organization]
        wait_s = 0.0
        for _, bucket in buckets:
            bucket.refill(now_s)
            wait_s = max(wait_s, bucket.wait_s())
        counted = self.window_start_s <= now_s < self.window_end_s
        if wait_s > 0.0:
            self.refused += counted
            return max(1, math.ceil(wait_s / self.resolution_s - _SLACK)) * self.resolution_s
        for counts_tokens, bucket in buckets:
            bucket.level -= tokens if counts_tokens else 1.0
        self.admitted += counted
        return 0.0

    def admit(
        self, organization: int, tokens: float, upload_s: float
    ) -> Generator[Event, Any, tuple[float, int]]:
        """Send the request until it is admitted; returns the seconds and the 429s it took.
        ``upload_s`` is the request's whole upload (half a round trip and its bytes)."""
        env = self.env
        started_s = env.now
        refusals = 0
        while True:
            retry_after_s = self.retry_after_s(organization, tokens)
            if retry_after_s == 0.0:
                break
            refusals += 1
            spread_s = self.spread_s * self.spread.random() if self.spread_s else 0.0
            yield env.timeout(2 * self.half_rtt_s + retry_after_s + spread_s)
        if refusals:
            yield env.timeout(max(0.0, upload_s - self.half_rtt_s))
        return env.now - started_s, refusals
