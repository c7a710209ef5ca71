"""The ``[rate_limit]`` section: an organization's request and token limits in a fleet.

The API limits each organization to so many requests and so many tokens per
minute.  A request over either limit is answered 429 by the gateway, before it
takes any worker, with a ``retry-after`` saying when it would be admitted; the
client waits that long and sends it again.  Each limit is a token bucket that
refills at the limit's rate and holds ``burst_s`` seconds of it (the API
enforces a per-minute limit over shorter periods, so a minute's budget cannot
be spent in one burst).  The agents of a fleet are spread evenly over
``organizations``, each with its own buckets.  The limits live at the
gateway, so a scenario with one runs on the fleet engine (``run`` and
``compare`` too, even for one agent).
"""

from __future__ import annotations

from models.fields import Section, param
from models.strict import Float, Int


class RateLimit(Section):
    """Requests and tokens per minute per organization, and how a 429 is answered."""

    requests_per_minute: Float = param(
        "requests per minute one organization may send; 0: no request limit",
        "assumption (0 in the presets); OpenAI's limits are set per organization and model "
        "tier, from a few hundred to tens of thousands",
        ge=0,
        le=1e9,
    )
    tokens_per_minute: Float = param(
        "tokens per minute one organization may send, counting each request's whole prompt "
        "(cached tokens included) and its output; 0: no token limit",
        "assumption (0 in the presets); OpenAI counts cached prompt tokens against the limit",
        ge=0,
        le=1e12,
    )
    organizations: Int = param(
        "organizations the fleet's agents belong to, agent k to organization k mod this "
        "(open load: rollout k); each has its own limits",
        "user choice",
        ge=1,
        le=1_000_000,
    )
    burst_s: Float = param(
        "seconds of the limit a bucket holds: a full bucket admits this many seconds' "
        "worth of requests or tokens at once",
        "assumption: OpenAI's guide says a per-minute limit may be enforced per second "
        "(60,000 a minute as 1,000 a second), so 1 s",
        gt=0,
        le=60,
    )
    retry_after_resolution_s: Float = param(
        "the retry-after the server sends is the wait until admission rounded up to this; "
        "the SDK honours it (it prefers retry-after-ms)",
        "assumption: 0.001 (a retry-after-ms header); 1 for whole-second retry-after",
        ge=0.001,
        le=60,
    )
    retry_spread_ms: Float = param(
        "clients told the same retry-after come back spread uniformly over this much "
        "(their timers, scheduling and network jitter); it decides who of a herd is first",
        "assumption: a few milliseconds of timer and network jitter",
        ge=0,
        le=60_000,
    )

    @property
    def limits(self) -> bool:
        """Whether any limit is set."""
        return self.requests_per_minute > 0 or self.tokens_per_minute > 0
