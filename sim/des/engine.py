"""The discrete-event engine: agents run rollouts on an event queue, alone or as a fleet
sharing pools.

One engine serves both uses.  A fleet's turn (``sim.des.fleet_turn``) walks the phases
of the stage table (``sim.turn.phases``): it takes each phase's pool, waits out the
phase in one timeout and records every wait; side holdings (the parallel classifiers
alongside prefill, overlapped post-inference work) hold their pool's server off the
turn's path.  The phases that hold no pool at the end of one turn and the start of the
next (download, tool, then building, connecting and uploading the next request) are one
timeout.  A single agent meets no other agent, so no pool is ever contended: its turn is
the fast path of two timeouts (the request, then the tool) while every stage's duration
is still recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any

import numpy as np

from models.scenario import Scenario
from models.stages import Pool, Side
from sim.des.blocks import Block
from sim.des.connections import Connection, new_connection
from sim.des.fleet_turn import fleet_rollout
from sim.des.kernel import Environment, Event
from sim.des.pools import Replicas, ServerPool, TimeWeighted
from sim.des.rate_limit import RateLimiter
from sim.des.residency import Residency
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.phases import PHASES, side_wait_column, wait_column
from sim.turn.transports import Transport

_PARALLEL = Side.PARALLEL_SAFETY


class Simulation:
    """One event queue (``sim.des.kernel``, SimPy's order): rollouts, the pools they share and
    what is recorded.

    ``contended=False`` is the single agent: pools are not modelled (one agent
    never waits for itself) and a turn is two timeouts, the request and the tool.
    """

    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        replication: int,
        window: tuple[float, float],
        contended: bool,
        faults: np.random.Generator,
        routing: np.random.Generator,
        record_starts: bool = True,
        retry_spread: np.random.Generator | None = None,
    ) -> None:
        self.scenario, self.transport, self.replication = scenario, transport, replication
        self.record_starts = record_starts
        """Record each turn's start time (for traces); a large fleet saves the memory."""
        self.window_start_s, self.window_end_s = window
        self.env = Environment()
        self.faults = faults
        self.blocks: dict[int, Block] = {}
        self.on_block_done: Callable[[Block], None] = lambda block: None
        self.next_rollout = 0
        self.rollouts_started_in_window = 0
        self.measured_in_flight = 0
        self.on_measured_done: Callable[[], None] = lambda: None
        """Called when a rollout that started inside the window ends."""
        self.turns_completed = 0
        self.output_tokens_completed = 0.0
        self.in_system = TimeWeighted(self.env, *window)
        self.contended = contended
        c = scenario.capacity
        self.pools = {
            pool: ServerPool(self.env, pool, n, *window) for pool, n in c.servers().items()
        }
        self.replicas = Replicas(c.inference_replicas, c.decode_slowdown_per_stream)
        self.residency: Residency | None = None
        self.replica_slots: list[ServerPool] = []
        if scenario.kv_cache.residency:
            # Routing picks a replica and the request waits for that replica's slots.
            fleet = self.pools[Pool.INFERENCE]
            self.replica_slots = [
                ServerPool(self.env, Pool.INFERENCE, c.streams_per_replica, *window, fleet)
                for _ in range(c.inference_replicas)
            ]
            self.residency = Residency(
                scenario, transport, c.inference_replicas, self._replica_loads, routing
            )
        self.limiter: RateLimiter | None = None
        if contended and scenario.rate_limit.limits:
            if retry_spread is None:
                raise ValueError("a rate-limited fleet needs a retry_spread stream")
            self.limiter = RateLimiter(scenario, self.env, window, retry_spread)
        # What a fleet's turn reads on every request (``sim.des.fleet_turn``), looked up once.
        self.parallel_pool = self.pools[_PARALLEL.info.pool]
        self.post_pool = self.pools[Side.OVERLAPPED_POST.info.pool]
        self.parallel_column = side_wait_column(_PARALLEL)
        self.inference_column = wait_column(next(p for p in PHASES if p.pool is Pool.INFERENCE))
        self.steps = [
            (
                self.pools[phase.pool] if phase.pool is not None else None,
                wait_column(phase) if phase.pool is not None else -1,
                self.pools[phase.inner] if phase.inner is not None else None,
                wait_column(phase, nested=True) if phase.inner is not None else -1,
                phase.pool is Pool.INFERENCE,
            )
            for phase in PHASES[1:-1]
        ]
        """Each phase between the first and the last: its pool, that pool's wait column, the
        nested pool and its column, whether it is the batched inference phase."""

    def _replica_loads(self) -> list[int]:
        """Each replica's requests in service and waiting (one agent: its streams)."""
        if not self.contended:
            return self.replicas.streams
        return [slots.load for slots in self.replica_slots]

    def block(self, index: int, rollouts: int = BLOCK_ROLLOUTS) -> Block:
        if index not in self.blocks:
            self.blocks[index] = Block(
                self.scenario, self.transport, index, rollouts, self.replication, self.contended
            )
        return self.blocks[index]

    def rollouts(
        self, indices: Iterable[int], think: np.random.Generator | None = None
    ) -> Generator[Event, Any, None]:
        """One agent without contention runs rollouts one after another, turn by turn.

        With ``think`` (a stream of pauses) the rollouts are one session: they share the
        agent's connection and are ``load.think_time_s`` apart.
        """
        env, timeout = self.env, self.env.timeout
        session = self.session_connection()
        for position, index in enumerate(indices):
            if think is not None and position > 0:
                yield timeout(float(self.scenario.load.think_time_s.sample(think, 1)[0]))
            block, local, measured, connection = self.begin_rollout(index, session)
            if self.residency is not None:
                yield from self.residency.one_agent(env, block, local, index, connection)
                self.end_rollout(block, local, measured)
                continue
            # The fast path, inline (one generator less per event): request, then tool.
            cold_flag, start_at_s = block.cold_flag, block.start_at_s
            is_cold_at, release = connection.is_cold, connection.release
            cold_request_s, warm_request_s = block.cold.request_s, block.warm.request_s
            tool_s = block.warm.tool_s
            for turn in range(block.offsets[local], block.offsets[local + 1]):
                now_s = env.now
                start_at_s[turn] = now_s
                if is_cold_at(now_s):
                    cold_flag[turn] = 1.0
                    yield timeout(cold_request_s[turn])
                else:
                    yield timeout(warm_request_s[turn])
                release(env.now)
                if tool_s[turn] > 0:
                    yield timeout(tool_s[turn])
            self.end_rollout(block, local, measured)

    def session_connection(self) -> Connection | None:
        """The connection an agent keeps across its rollouts, if it keeps one."""
        if not self.scenario.connection.reuse_across_rollouts:
            return None
        return new_connection(self.scenario, self.transport, self.faults)

    def fleet_rollout(
        self, session: Connection | None = None, organization: int = 0
    ) -> Generator[Event, Any, None]:
        """The next rollout of a fleet, contending for the pools (``sim.des.fleet_turn``)."""
        return fleet_rollout(self, session, organization)

    def begin_rollout(
        self, index: int, session: Connection | None
    ) -> tuple[Block, int, bool, Connection]:
        block_index, local = divmod(index, BLOCK_ROLLOUTS)
        block = self.block(block_index)
        now_s = self.env.now
        measured = self.window_start_s <= now_s < self.window_end_s
        if measured:
            self.rollouts_started_in_window += 1
            self.measured_in_flight += 1
        block.started_at_s[local] = now_s
        self.in_system.change(+1)
        if session is None:
            session = new_connection(self.scenario, self.transport, self.faults)
        return block, local, measured, session

    def end_rollout(self, block: Block, local: int, measured: bool) -> None:
        block.ended_at_s[local] = self.env.now
        self.in_system.change(-1)
        if measured:
            self.measured_in_flight -= 1
            self.on_measured_done()
        block.finished += 1
        if block.finished == block.rollouts:
            self.on_block_done(block)
