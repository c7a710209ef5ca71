"""The session prefixes one inference replica holds in its KV memory.

A session's entry is the KV of its history (the shared prefix of instructions
and tool definitions is the same for every session and stays hot on every
replica, so it is set aside from the capacity, not held per session).  A
request takes its session's entry when its prefill starts (the entry is in use
and cannot be evicted while the request runs) and gives it back, grown by the
turn, when its decode ends; from then the entry is idle, and it expires
``ttl_s`` after that.  When the idle and in-use entries exceed the capacity:

- ``lru``: the least recently used idle entries are evicted, oldest first;
- ``ttl-pin``: entries within their time-to-live are pinned, so the entry being
  given back is not kept if it does not fit beside them.

Memory a running request needs beyond its entry is the batch's: the stream
slots bound it, and it is not modelled here.
"""

from __future__ import annotations

from collections import OrderedDict

from models.kv_cache import Eviction


class ReplicaPrefixes:
    """Idle entries in least-recently-used order, in-use entries, and the tokens held."""

    def __init__(self, capacity_tokens: float, ttl_s: float, eviction: Eviction) -> None:
        self.capacity_tokens = capacity_tokens
        self.ttl_s = ttl_s
        self.pinned = eviction is Eviction.TTL_PIN
        self._idle: OrderedDict[int, tuple[float, float]] = OrderedDict()
        """session -> (tokens, idle since), least recently used first."""
        self._in_use: dict[int, float] = {}
        self.held_tokens = 0.0

    def take(self, session: int, now_s: float) -> float:
        """The history tokens held for ``session`` at a prefill starting now (0: none, or
        expired); the entry stays in use until ``give_back``."""
        entry = self._idle.pop(session, None)
        if entry is None:
            return 0.0
        tokens, idle_since_s = entry
        if now_s - idle_since_s > self.ttl_s:
            self.held_tokens -= tokens
            return 0.0
        self._in_use[session] = tokens
        return tokens

    def give_back(self, session: int, tokens: float, now_s: float) -> None:
        """The session's request ended at ``now_s`` with ``tokens`` of history: keep them if
        the eviction policy lets the entry stay."""
        self.held_tokens -= self._in_use.pop(session, 0.0)
        self._expire(now_s)
        if self.pinned and self.held_tokens + tokens > self.capacity_tokens:
            return
        self._idle[session] = (tokens, now_s)
        self.held_tokens += tokens
        while self.held_tokens > self.capacity_tokens and self._idle:
            _, (evicted, _) = self._idle.popitem(last=False)
            self.held_tokens -= evicted

    def _expire(self, now_s: float) -> None:
        """Drop idle entries past their time-to-live (all idle since before the rest)."""
        while self._idle:
            session, (tokens, idle_since_s) = next(iter(self._idle.items()))
            if now_s - idle_since_s <= self.ttl_s:
                return
            del self._idle[session]
            self.held_tokens -= tokens
