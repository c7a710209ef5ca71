"""KV residency: whether a session's prefix is still in an inference replica's memory.

In the simple mode (``residency = false``) every turn reuses
``inference.prefix_cache_hit_fraction`` of its prior context.  With residency
on, that fraction applies only to what the chosen replica still holds of the
session's history: where a request lands (the routing policy of its
transport), how long its tool gap was (the time-to-live) and what other
sessions pushed out (the eviction policy) decide how much is re-prefilled.
"""

from __future__ import annotations

from enum import StrEnum

from models.fields import Section, param
from models.strict import Bool, Float


class Routing(StrEnum):
    """How a request picks its inference replica."""

    AFFINITY = "affinity"
    """The replica the request's connection was bound to when it opened (the one with the
    fewest bound connections then); a new connection binds afresh."""
    CONSISTENT_HASH = "consistent-hash"
    """A hash of the conversation: the same replica for every turn of a rollout."""
    ROUND_ROBIN = "round-robin"
    """The next replica in turn, whoever asks."""
    RANDOM = "random"
    """A replica drawn uniformly (a balancer such as kube-proxy's iptables mode)."""
    LEAST_LOADED = "least-loaded"
    """The replica with the fewest streams in flight (ties: the lowest index)."""


class Eviction(StrEnum):
    """What gives way when a replica's KV memory is full."""

    LRU = "lru"
    """The least recently used idle prefix is evicted to keep the one just written."""
    TTL_PIN = "ttl-pin"
    """A prefix is pinned for its time-to-live (as in agent-aware schedulers that hold KV
    through a tool pause): a prefix that does not fit beside the pinned ones is not kept."""


class KvCache(Section):
    """Prefix-cache residency per inference replica and the routing that decides hits."""

    residency: Bool = param(
        "false: the simple mode, every turn reuses inference.prefix_cache_hit_fraction of its "
        "prior context; true: the reuse is what the chosen replica still holds",
        "model choice (the simple mode reproduces the fixed-fraction model)",
    )
    ttl_s: Float = param(
        "an idle prefix (the session is in its tool gap or gone) expires after this long",
        "assumption: OpenAI's prompt-caching guide says cached prefixes stay active for 5 to "
        "10 minutes of inactivity; the low end",
        gt=0,
        le=86400,
    )
    eviction: Eviction = param(
        "lru: the least recently used idle prefix gives way; ttl-pin: prefixes within their "
        "time-to-live are never evicted, and one that does not fit is not kept",
        "assumption: LRU as in vLLM's and SGLang's prefix caches",
    )
    http_routing: Routing = param(
        "replica choice of per-request HTTP (http, http-full)",
        "assumption: a balancer that does not know the session sends requests round-robin",
    )
    ws_routing: Routing = param(
        "replica choice of WebSocket mode (ws, ws-append)",
        "assumption: the connection is a natural session key, bound to one replica",
    )

    def routing(self, websocket: bool) -> Routing:
        """The routing policy of a transport."""
        return self.ws_routing if websocket else self.http_routing
