"""Which inference replica a request lands on, by the routing policy of its transport."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from models.kv_cache import Routing

_MIX = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


def conversation_hash(session: int) -> int:
    """A well-spread 64-bit hash of a conversation's number (splitmix64's finaliser)."""
    z = (session * _MIX + _MIX) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class Router:
    """Picks a replica per request; ``loads()`` gives each replica's requests in service and
    waiting (least-loaded takes the smallest, the lowest index on a tie)."""

    def __init__(
        self,
        policy: Routing,
        replicas: int,
        loads: Callable[[], list[int]],
        rng: np.random.Generator,
    ) -> None:
        self.policy = policy
        self._loads = loads
        self._replicas = replicas
        self._rng = rng
        self._next = 0
        self._bound: dict[int, int] = {}
        self._bound_count = [0] * self._replicas

    def choose(self, session: int, new_connection: bool) -> int:
        """The replica of ``session``'s request; ``new_connection``: the request opened a
        connection (affinity binds it afresh)."""
        policy = self.policy
        if policy is Routing.AFFINITY:
            if new_connection or session not in self._bound:
                self._bind(session)
            return self._bound[session]
        if policy is Routing.CONSISTENT_HASH:
            return conversation_hash(session) % self._replicas
        if policy is Routing.ROUND_ROBIN:
            replica = self._next
            self._next = (replica + 1) % self._replicas
            return replica
        if policy is Routing.RANDOM:
            return int(self._rng.integers(self._replicas))
        loads = self._loads()
        return loads.index(min(loads))

    def close(self, session: int) -> None:
        """The rollout ended: its connection no longer holds a replica."""
        replica = self._bound.pop(session, None)
        if replica is not None:
            self._bound_count[replica] -= 1

    def _bind(self, session: int) -> None:
        self.close(session)
        counts = self._bound_count
        replica = counts.index(min(counts))
        counts[replica] += 1
        self._bound[session] = replica
