"""Who runs rollouts through the engine: one agent back to back, or a fleet under load.

``simulate`` is the single-agent model: no contention, every rollout kept.
``simulate_fleet`` is one replication of a closed population of agents or of
open Poisson arrivals, measured over a window after a warm-up.  The load goes
on after the window closes, until every rollout that started inside it has
finished, so the last measured rollouts see the same contention as the first.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import numpy as np

from models.scenario import Scenario
from sim.des import memory, progress, vectorised
from sim.des.blocks import Block, reduce_block
from sim.des.replication import CHECKPOINTS, Checkpoints, PoolStats, Replication
from sim.des.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.turn.records import RolloutRecords, concatenate
from sim.turn.transports import Transport
from sim.turn.turns import Turns

if TYPE_CHECKING:
    from sim.des.kernel import Event

Progress = Callable[[int], None]


def simulate(
    scenario: Scenario,
    transport: Transport,
    rollouts: int,
    keep_turns: bool = False,
    progress: Progress | None = None,
    reference: bool = False,
) -> RolloutRecords:
    """One agent runs ``rollouts`` rollouts back to back, without contention.

    Each block of rollouts runs in its own environment with its own stream of
    connection faults, so a rollout does not depend on how many are run.  With
    ``connection.reuse_across_rollouts`` a block is one session of the agent:
    its rollouts run in order on one connection, ``load.think_time_s`` apart.
    Blocks run as array passes (``sim.des.vectorised``) where no event queue is
    needed; ``reference`` runs them all on the event queue, the reference those passes match.
    The process keeps freed memory for the next block (``sim.des.memory``).
    """
    memory.keep_freed_memory()
    one_block = _one_block if reference or not vectorised.applies(scenario) else None
    parts = []
    for block_index, first in enumerate(range(0, rollouts, BLOCK_ROLLOUTS)):
        count = min(BLOCK_ROLLOUTS, rollouts - first)
        run = one_block or vectorised.simulate_block
        parts.append(run(scenario, transport, block_index, count, keep_turns))
        if progress is not None:
            progress(count)
    return concatenate(parts)


def simulate_turns(
    scenario: Scenario, transport: Transport, turns: Turns, keep_turns: bool = False
) -> RolloutRecords:
    """One agent runs the rollouts of ``turns`` (observed elsewhere, not drawn) back to back,
    without contention: the same engine on turns whose counts, tokens and tool times are
    given."""
    if turns.rollouts > BLOCK_ROLLOUTS:
        raise ValueError(f"{turns.rollouts} rollouts: at most {BLOCK_ROLLOUTS} given at once")
    from sim.des.engine import Simulation

    faults = stream(scenario.seed, 0, Draw.CONNECTION_FAULTS)
    routing = stream(scenario.seed, 0, Draw.ROUTING)
    sim = Simulation(scenario, transport, 0, (0.0, np.inf), False, faults, routing)
    sim.blocks[0] = Block(scenario, transport, 0, turns.rollouts, 0, False, turns)
    sim.env.process(sim.rollouts(range(turns.rollouts)))
    sim.env.run()
    every = np.ones(turns.rollouts, dtype=bool)
    return reduce_block(scenario, transport, sim.blocks[0], every, every if keep_turns else None)


def _one_block(
    scenario: Scenario, transport: Transport, block_index: int, count: int, keep_turns: bool
) -> RolloutRecords:
    """One agent runs one block's rollouts in an environment of their own.

    A function of its own, so the block's working set is freed before the next
    block is drawn.
    """
    from sim.des.engine import Simulation  # the event queue loads only where one runs

    faults = stream(scenario.seed, block_index, Draw.CONNECTION_FAULTS)
    routing = stream(scenario.seed, block_index, Draw.ROUTING)
    sim = Simulation(scenario, transport, 0, (0.0, np.inf), False, faults, routing)
    block = sim.block(block_index, count)
    first = block_index * BLOCK_ROLLOUTS
    think = (
        stream(scenario.seed, block_index, Draw.THINK_TIME)
        if scenario.connection.reuse_across_rollouts
        else None
    )
    sim.env.process(sim.rollouts(range(first, first + count), think))
    sim.env.run()
    every = np.ones(count, dtype=bool)
    return reduce_block(scenario, transport, block, every, every if keep_turns else None)


class _Fleet:
    """One replication of a fleet: the load, the measured window and the reduced records."""

    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        replication: int,
        trace_rollouts: int,
        job: str | None = None,
    ) -> None:
        from sim.des.engine import Simulation

        load = scenario.load
        self.window = (load.warmup_s, load.warmup_s + load.duration_s)
        faults = stream(scenario.seed, 0, Draw.CONNECTION_FAULTS, replication)
        routing = stream(scenario.seed, 0, Draw.ROUTING, replication)
        spread = stream(scenario.seed, 0, Draw.RATE_LIMIT, replication)
        self.sim = Simulation(
            scenario,
            transport,
            replication,
            self.window,
            True,
            faults,
            routing,
            trace_rollouts > 0,
            spread,
        )
        self.sim.on_block_done = self._reduce_and_free
        self.sim.on_measured_done = self._stop_when_measured
        self.stop = self.sim.env.event()
        self.arrivals = stream(scenario.seed, 0, Draw.ARRIVALS, replication)
        self.scenario, self.transport = scenario, transport
        self.trace_rollouts = trace_rollouts
        self.job = job
        self.first_measured: int | None = None
        self.records: list[RolloutRecords] = []
        self.in_system_at_end = 0
        self.snapshots: list[tuple[float, ...]] = []

    def _measured(self, block: Block) -> tuple[np.ndarray, np.ndarray | None]:
        start, end = self.window
        keep = (
            (block.started_at_s >= start)
            & (block.started_at_s < end)
            & np.isfinite(block.ended_at_s)
        )
        if self.trace_rollouts == 0 or self.first_measured is None:
            return keep, None
        index = np.arange(block.rollouts) + block.index * BLOCK_ROLLOUTS
        sample = keep & (index >= self.first_measured)
        return keep, sample & (index < self.first_measured + self.trace_rollouts)

    def _reduce(self, block: Block) -> RolloutRecords:
        keep, traced = self._measured(block)
        return reduce_block(self.scenario, self.transport, block, keep, traced)

    def _reduce_and_free(self, block: Block) -> None:
        # A finished block becomes per-rollout rows at once, so memory follows what is in flight.
        self.records.append(self._reduce(block))
        del self.sim.blocks[block.index]

    def _stop_when_measured(self) -> None:
        closed = self.sim.env.now >= self.window[1]
        if closed and self.sim.measured_in_flight == 0 and not self.stop.triggered:
            self.stop.succeed()

    def _note_first_measured(self) -> None:
        """The first rollout to start inside the window (the trace's sample starts there)."""
        if self.first_measured is None and self.sim.env.now >= self.window[0]:
            self.first_measured = self.sim.next_rollout

    def _first_start_s(self) -> float:
        return float(self.arrivals.uniform(0.0, self.scenario.load.start_stagger_s))

    def _think_s(self) -> float:
        return float(self.scenario.load.think_time_s.sample(self.arrivals, 1)[0])

    def _open_arrivals(self) -> Generator[Event, Any, None]:
        env = self.sim.env
        mean_gap_s = 1.0 / self.scenario.load.rollouts_per_s
        while True:
            yield env.timeout(self.arrivals.exponential(mean_gap_s))
            self._note_first_measured()
            organization = self.sim.next_rollout % self.scenario.rate_limit.organizations
            env.process(self.sim.fleet_rollout(None, organization))

    def _checkpoints(self, drain_limit_s: float) -> Generator[Event, Any, None]:
        """Snapshot the levels and counters at each checkpoint; stop after the drain limit."""
        env, sim = self.sim.env, self.sim
        levels = [pool.busy for pool in sim.pools.values()]
        levels += [pool.waiting for pool in sim.pools.values()] + [sim.in_system]
        start_s, end_s = self.window
        for k in range(CHECKPOINTS + 1):
            yield env.timeout(start_s + (end_s - start_s) * k / CHECKPOINTS - env.now)
            limiter = sim.limiter
            counts = (
                sim.turns_completed,
                sim.output_tokens_completed,
                sim.rollouts_started_in_window,
                limiter.admitted if limiter else 0,
                limiter.refused if limiter else 0,
            )
            self.snapshots.append((env.now, *(level.area() for level in levels), *counts))
            # The drain after the window is short next to it: the window's end is "almost".
            progress.report(self.job, 0.99 * env.now / end_s if end_s > 0 else 0.0)
        self.in_system_at_end = sim.in_system.level
        self._stop_when_measured()
        yield env.timeout(drain_limit_s)
        if not self.stop.triggered:
            self.stop.succeed()

    def run(self, drain_limit_s: float) -> Replication:
        from sim.des.fleet_turn import closed_agent

        sim, load = self.sim, self.scenario.load
        sim.env.process(self._checkpoints(drain_limit_s))
        if load.kind == "closed":
            organizations = self.scenario.rate_limit.organizations
            for agent in range(load.agents):
                agent_loop = closed_agent(
                    sim,
                    agent % organizations,
                    self._first_start_s,
                    self._think_s,
                    self._note_first_measured,
                )
                sim.env.process(agent_loop)
        else:
            sim.env.process(self._open_arrivals())
        sim.env.run(until=self.stop)
        records = concatenate(self.records + [self._reduce(b) for b in sim.blocks.values()])
        return Replication(
            records=records,
            pools={
                name: PoolStats(
                    capacity=pool.capacity,
                    utilization=pool.utilization(),
                    mean_busy=pool.busy.mean(),
                    mean_waiting=pool.waiting.mean(),
                )
                for name, pool in sim.pools.items()
            },
            window_s=load.duration_s,
            turns_completed=sim.turns_completed,
            output_tokens_completed=sim.output_tokens_completed,
            rollouts_started=sim.rollouts_started_in_window,
            requests_admitted=sim.limiter.admitted if sim.limiter else 0,
            requests_refused=sim.limiter.refused if sim.limiter else 0,
            mean_in_system=sim.in_system.mean(),
            in_system_at_end=self.in_system_at_end,
            checkpoints=self._checkpoint_arrays(),
        )

    def _checkpoint_arrays(self) -> Checkpoints:
        table = np.array(self.snapshots)
        pools = list(self.sim.pools)
        n = len(pools)
        return Checkpoints(
            times_s=table[:, 0],
            busy_s={pool: table[:, 1 + i] for i, pool in enumerate(pools)},
            waiting_s={pool: table[:, 1 + n + i] for i, pool in enumerate(pools)},
            in_system_s=table[:, 1 + 2 * n],
            turns_completed=table[:, 2 + 2 * n],
            output_tokens_completed=table[:, 3 + 2 * n],
            rollouts_started=table[:, 4 + 2 * n],
            requests_admitted=table[:, 5 + 2 * n],
            requests_refused=table[:, 6 + 2 * n],
        )


def simulate_fleet(
    scenario: Scenario,
    transport: Transport,
    replication: int,
    trace_rollouts: int = 0,
    job: str | None = None,
) -> Replication:
    """One replication of the fleet under ``scenario.load`` and ``scenario.capacity``.

    New rollouts keep starting after the window closes (they are not measured)
    until every rollout started inside it has finished, for at most as long
    again as the window and no less than 600 s (an unstable system may not
    finish; its unfinished rollouts are not measured).  The first
    ``trace_rollouts`` measured rollouts keep per-turn rows.  ``job`` names the replication
    in the progress it reports (``sim.des.progress``).
    """
    fleet = _Fleet(scenario, transport, replication, trace_rollouts, job)
    result = fleet.run(max(600.0, scenario.load.duration_s))
    progress.report(job, 1.0)
    return result
