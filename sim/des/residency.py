"""KV residency in a run: each replica's session prefixes and the router in front of them.

A turn's request is routed when its prefill starts; the replica gives back the
history it still holds of the session, and what it no longer holds is
prefilled again (``models.costs.reprefill_s``).  When the decode ends the
session's history, grown by the turn, is written back to that replica.  The
missing tokens of every turn are recorded on its block, so the turn's costs
are recomputed from them when the block is reduced.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from models.costs import later_first_token_s, reprefill_s
from models.scenario import Scenario
from sim.des.blocks import Block
from sim.des.connections import Connection
from sim.des.kernel import Environment, Event
from sim.des.replica_prefixes import ReplicaPrefixes
from sim.des.routing import Router
from sim.turn.transports import Transport
from sim.turn.turns import Turns


class Residency:
    """Every replica's prefixes and the routing policy of one transport."""

    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        replicas: int,
        loads: Callable[[], list[int]],
        rng: np.random.Generator,
    ) -> None:
        kv = scenario.kv_cache
        shared_tokens = scenario.workload.instructions_tokens
        shared_tokens += scenario.workload.tool_definitions_tokens
        capacity = max(0.0, scenario.inference.kv_capacity_tokens - shared_tokens)
        self.replicas = [ReplicaPrefixes(capacity, kv.ttl_s, kv.eviction) for _ in range(replicas)]
        self.router = Router(kv.routing(transport.is_websocket), replicas, loads, rng)
        self._scenario = scenario

    def route(self, session: int, new_connection: bool) -> int:
        """The replica a request of ``session`` goes to (``new_connection``: it opened one)."""
        return self.router.choose(session, new_connection)

    def take(
        self,
        turns: Turns,
        missing: list[float],
        turn: int,
        session: int,
        replica: int,
        now_s: float,
    ) -> float:
        """``turn``'s prefill starts on ``replica`` at ``now_s``: record the history it no
        longer holds in ``missing``; returns the extra prefill seconds."""
        held = self.replicas[replica].take(session, now_s)
        prior = float(turns.prior_tokens[turn])
        if held >= prior:
            return 0.0
        missing[turn] = prior - held
        return reprefill_s(self._scenario, prior - held)

    def finish(self, history_tokens: float, session: int, replica: int, now_s: float) -> None:
        """The turn's decode ended at ``now_s``: the replica keeps the grown history if it can."""
        self.replicas[replica].give_back(session, history_tokens, now_s)

    def one_agent(
        self,
        env: Environment,
        block: Block,
        local: int,
        session: int,
        connection: Connection,
    ) -> Generator[Event, Any, None]:
        """One agent's rollout: each turn's prefill may grow by the history its replica no
        longer holds (one agent meets no other, so the replica is read and written at the
        moments the request reaches them, inside the request's timeout)."""
        missing = block.missing_history
        for turn in range(block.offsets[local], block.offsets[local + 1]):
            now_s = env.now
            block.start_at_s[turn] = now_s
            cold = connection.is_cold(now_s)
            block.cold_flag[turn] = float(cold)
            seg = block.cold if cold else block.warm
            at_s = now_s + seg.before_prefill_s[turn]
            replica = self.route(session, cold)
            extra_s = self.take(block.turns, missing, turn, session, replica, at_s)
            request_s = seg.request_s[turn]
            if extra_s > 0:
                request_s += later_first_token_s(seg.prefill_s[turn], seg.parallel_s[turn], extra_s)
            self.finish(
                block.history_after[turn],
                session,
                replica,
                now_s + request_s - seg.after_decode_s[turn],
            )
            yield env.timeout(request_s)
            connection.release(env.now)
            if seg.tool_s[turn] > 0:
                yield env.timeout(seg.tool_s[turn])
        self.close(session)

    def close(self, session: int) -> None:
        """The session's rollout ended (its entries stay until evicted or expired)."""
        self.router.close(session)
