"""KV residency in a run: each replica's session prefixes and the router in front of them.

A turn's request is routed when its prefill starts; the replica gives back the
history it still holds of the session, and what it no longer holds is
prefilled again (``models.costs.reprefill_s``).  When the decode ends the
session's history, grown by the turn, is written back to that replica.  The
missing tokens of every turn are recorded on its block, so the turn's costs
are recomputed from them when the block is reduced.
"""

from __future__ import annotations

import numpy as np

from models.costs import reprefill_s
from models.scenario import Scenario
from sim.engine.replica_prefixes import ReplicaPrefixes
from sim.engine.routing import Router
from sim.engine.transports import Transport
from sim.engine.turns import Turns


class Residency:
    """Every replica's prefixes and the routing policy of one transport."""

    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        streams: list[int],
        rng: np.random.Generator,
    ) -> None:
        kv = scenario.kv_cache
        shared_tokens = scenario.workload.instructions_tokens
        shared_tokens += scenario.workload.tool_definitions_tokens
        capacity = max(0.0, scenario.inference.kv_capacity_tokens - shared_tokens)
        self.replicas = [
            ReplicaPrefixes(capacity, kv.ttl_s, kv.eviction) for _ in range(len(streams))
        ]
        self.router = Router(kv.routing(transport.is_websocket), streams, rng)
        self._scenario = scenario

    def start(
        self,
        turns: Turns,
        missing: list[float],
        turn: int,
        session: int,
        new_connection: bool,
        now_s: float,
    ) -> tuple[int, float]:
        """Route ``turn`` (its prefill starts at ``now_s``); record the history its replica
        no longer holds in ``missing``.  Returns the replica and the extra prefill seconds."""
        replica = self.router.choose(session, new_connection)
        held = self.replicas[replica].take(session, now_s)
        prior = float(turns.prior_tokens[turn])
        if held >= prior:
            return replica, 0.0
        missing[turn] = prior - held
        return replica, reprefill_s(self._scenario, prior - held)

    def finish(self, history_tokens: float, session: int, replica: int, now_s: float) -> None:
        """The turn's decode ended at ``now_s``: the replica keeps the grown history if it can."""
        self.replicas[replica].give_back(session, history_tokens, now_s)

    def close(self, session: int) -> None:
        """The session's rollout ended (its entries stay until evicted or expired)."""
        self.router.close(session)
