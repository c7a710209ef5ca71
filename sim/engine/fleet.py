"""The fleet engine: many agents share API workers, classifiers, storage and inference.

Each turn walks the stages in order and holds the pool each one needs: an
API worker for validate, state_load, render and route (and a state-store slot
for a load from storage), a classifier for safety, an inference slot on the
least-loaded replica for prefill and decode (whose per-stream rate falls with
the batch, per ``capacity.decode_slowdown_per_stream``), and an API worker for
post-inference work (blocking over HTTP, a separate off-path process over
WebSocket).  Every wait is recorded per pool; their sum is the ``queue`` stage,
so the stages of a turn still add up to the turn.
"""

from __future__ import annotations

from array import array
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from models.costs import Work, stage_costs
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.engine.connections import new_connection
from sim.engine.draws import draw_turns
from sim.engine.pools import Pool, TimeWeighted
from sim.engine.records import RolloutRecords, concatenate
from sim.engine.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.engine.transports import Transport, turn_work
from sim.engine.turns import Turns

POOLS = ("api", "state_store", "safety", "inference")
"""Contended pools, in the order a turn meets them."""

_PRE = (Stage.CLIENT_BUILD, Stage.CONNECT, Stage.RECOVER, Stage.UPLOAD)
_QUEUE_COLUMN = STAGES.index(Stage.QUEUE)
_DECODE_COLUMN = STAGES.index(Stage.DECODE)


@dataclass(frozen=True)
class PoolStats:
    """Time-weighted statistics of one pool over the measured window."""

    capacity: int
    utilization: float
    mean_busy: float
    mean_waiting: float


@dataclass(frozen=True)
class Replication:
    """What one replication measured: rollouts that started inside the window."""

    records: RolloutRecords
    pools: dict[str, PoolStats]
    window_s: float
    turns_completed: int
    output_tokens_completed: float
    rollouts_started: int
    mean_in_system: float
    in_system_at_end: int
    wait_s_by_pool: dict[str, float]
    """Total wait per pool over the measured rollouts' turns."""


class _Segments:
    """Per-turn service times of one variant (cold or warm).

    Stored as ``array.array`` of doubles: indexing is nearly as fast as a list
    and takes a quarter of the memory, which bounds a large fleet's footprint.
    """

    def __init__(self, scenario: Scenario, work: Work) -> None:
        costs = stage_costs(scenario, work)
        s = costs.stage_s
        self.pre_s = _compact(sum(s[stage] for stage in _PRE))
        self.validate_s = _compact(s[Stage.VALIDATE])
        self.state_load_s = _compact(s[Stage.STATE_LOAD])
        self.from_store = (work.store_loads > 0).tolist()
        self.render_route_s = _compact(s[Stage.RENDER] + s[Stage.ROUTE])
        self.api_pre_s = _compact(
            s[Stage.VALIDATE] + s[Stage.STATE_LOAD] + s[Stage.RENDER] + s[Stage.ROUTE]
        )
        self.hops_s = _compact(s[Stage.HOPS])
        self.safety_s = _compact(s[Stage.SAFETY])
        self.prefill_s = _compact(s[Stage.PREFILL])
        self.decode_s = _compact(s[Stage.DECODE])
        self.post_s = _compact(s[Stage.POST])
        self.post_overlapped_s = _compact(costs.post_overlapped_s)
        self.download_s = _compact(s[Stage.DOWNLOAD])
        self.tool_s = _compact(s[Stage.TOOL])


def _compact(seconds: np.ndarray) -> array:
    return array("d", np.ascontiguousarray(seconds, dtype=float).tobytes())


@dataclass
class _Block:
    """Drawn turns of one block of rollouts and what the run recorded about them."""

    turns: Turns
    cold: _Segments
    warm: _Segments
    offsets: list[int]
    cold_flag: np.ndarray
    wait_s: np.ndarray
    decode_s: np.ndarray
    ttft_wait_s: np.ndarray
    started_at_s: np.ndarray = field(default_factory=lambda: np.full(BLOCK_ROLLOUTS, np.nan))
    ended_at_s: np.ndarray = field(default_factory=lambda: np.full(BLOCK_ROLLOUTS, np.nan))
    finished: int = 0


class _Fleet:
    def __init__(self, scenario: Scenario, transport: Transport, replication: int) -> None:
        self.scenario = scenario
        self.transport = transport
        self.replication = replication
        load, capacity = scenario.load, scenario.capacity
        self.window_start_s = load.warmup_s
        self.window_end_s = load.warmup_s + load.duration_s
        self.env = simpy.Environment()
        window = (self.window_start_s, self.window_end_s)
        self.pools = {
            "api": Pool(self.env, "api", capacity.api_workers, *window),
            "state_store": Pool(self.env, "state_store", capacity.state_store_slots, *window),
            "safety": Pool(self.env, "safety", capacity.safety_workers, *window),
            "inference": Pool(self.env, "inference", capacity.inference_slots, *window),
        }
        self.streams_on_replica = [0] * capacity.inference_replicas
        self.slowdown = capacity.decode_slowdown_per_stream
        self.half_rtt_s = scenario.network.rtt_ms * 1e-3 / 2
        self.in_system = TimeWeighted(self.env, *window)
        self.faults = stream(scenario.seed, 0, Draw.CONNECTION_FAULTS, replication)
        self.arrivals = stream(scenario.seed, 0, Draw.ARRIVALS, replication)
        self.blocks: dict[int, _Block] = {}
        self.finished_records: list[RolloutRecords] = []
        self.measured_wait_s = np.zeros(len(POOLS))
        self.next_rollout = 0
        self.rollouts_started_in_window = 0
        self.turns_completed = 0
        self.output_tokens_completed = 0.0
        self.in_system_at_end = 0

    def block(self, index: int) -> _Block:
        if index not in self.blocks:
            turns = draw_turns(self.scenario, index, BLOCK_ROLLOUTS, self.replication)
            cold_work, warm_work = turn_work(self.scenario, self.transport, turns)
            self.blocks[index] = _Block(
                turns=turns,
                cold=_Segments(self.scenario, cold_work),
                warm=_Segments(self.scenario, warm_work),
                offsets=turns.offsets.tolist(),
                cold_flag=np.zeros(turns.count),
                wait_s=np.zeros((turns.count, len(POOLS))),
                decode_s=np.zeros(turns.count),
                ttft_wait_s=np.zeros(turns.count),
            )
        return self.blocks[index]

    def rollout(self) -> Generator[simpy.Event, Any, None]:
        index = self.next_rollout
        self.next_rollout += 1
        block_index, local = divmod(index, BLOCK_ROLLOUTS)
        block = self.block(block_index)
        env = self.env
        if self.window_start_s <= env.now < self.window_end_s:
            self.rollouts_started_in_window += 1
        block.started_at_s[local] = env.now
        self.in_system.change(+1)
        connection = new_connection(self.scenario, self.transport, self.faults)
        for turn in range(block.offsets[local], block.offsets[local + 1]):
            is_cold = connection.is_cold(env.now)
            block.cold_flag[turn] = is_cold
            segments = block.cold if is_cold else block.warm
            response_end_s = yield from self.turn(block, segments, turn)
            connection.release(response_end_s)
            # The download and the tool use no pool: one timeout for both.
            yield env.timeout(segments.download_s[turn] + segments.tool_s[turn])
        block.ended_at_s[local] = env.now
        self.in_system.change(-1)
        block.finished += 1
        if block.finished == BLOCK_ROLLOUTS:
            # Reduce a finished block to per-rollout rows and free its per-turn arrays.
            self.finished_records.append(self._block_records(block))
            del self.blocks[block_index]

    def turn(self, block: _Block, seg: _Segments, t: int) -> Generator[simpy.Event, Any, float]:
        """One request up to its response's last byte; returns when that byte arrives."""
        env, pools, waits = self.env, self.pools, block.wait_s[t]
        yield env.timeout(seg.pre_s[t])
        request, waits[0] = yield from pools["api"].acquire()
        if seg.from_store[t]:
            yield env.timeout(seg.validate_s[t])
            waits[1] = yield from pools["state_store"].serve(seg.state_load_s[t])
            yield env.timeout(seg.render_route_s[t])
        else:
            yield env.timeout(seg.api_pre_s[t])
        pools["api"].release(request)
        if seg.hops_s[t] > 0:
            yield env.timeout(seg.hops_s[t])
        if seg.safety_s[t] > 0:
            waits[2] = yield from pools["safety"].serve(seg.safety_s[t])
        slot, waits[3] = yield from pools["inference"].acquire()
        block.ttft_wait_s[t] = waits.sum()
        streams = self.streams_on_replica
        replica = streams.index(min(streams))
        streams[replica] += 1
        batch = streams[replica]
        yield env.timeout(seg.prefill_s[t])
        decode_s = seg.decode_s[t] * (1.0 + self.slowdown * (batch - 1))
        block.decode_s[t] = decode_s
        yield env.timeout(decode_s)
        streams[replica] -= 1
        pools["inference"].release(slot)
        if seg.post_s[t] > 0:
            waits[0] += yield from pools["api"].serve(seg.post_s[t])
        if seg.post_overlapped_s[t] > 0:
            env.process(pools["api"].serve(seg.post_overlapped_s[t]))
        response_end_s = env.now + seg.download_s[t]
        if self.window_start_s <= response_end_s < self.window_end_s:
            self.turns_completed += 1
            self.output_tokens_completed += block.turns.output_tokens[t]
        return response_end_s

    def closed_agent(self) -> Generator[simpy.Event, Any, None]:
        load = self.scenario.load
        yield self.env.timeout(self.arrivals.uniform(0.0, load.start_stagger_s))
        while self.env.now < self.window_end_s:
            yield from self.rollout()
            yield self.env.timeout(float(load.think_time_s.sample(self.arrivals, 1)[0]))

    def open_arrivals(self) -> Generator[simpy.Event, Any, None]:
        mean_gap_s = 1.0 / self.scenario.load.rollouts_per_s
        while True:
            yield self.env.timeout(self.arrivals.exponential(mean_gap_s))
            if self.env.now >= self.window_end_s:
                return
            self.env.process(self.rollout())

    def window_closes(self) -> Generator[simpy.Event, Any, None]:
        yield self.env.timeout(self.window_end_s)
        self.in_system_at_end = self.in_system.level

    def run(self, drain_limit_s: float) -> Replication:
        load = self.scenario.load
        self.env.process(self.window_closes())
        if load.kind == "closed":
            for _ in range(load.agents):
                self.env.process(self.closed_agent())
        else:
            self.env.process(self.open_arrivals())
        self.env.run(until=self.window_end_s + drain_limit_s)
        records = self.measured()
        return Replication(
            records=records,
            pools={
                name: PoolStats(
                    capacity=pool.capacity,
                    utilization=pool.utilization(),
                    mean_busy=pool.busy.mean(),
                    mean_waiting=pool.waiting.mean(),
                )
                for name, pool in self.pools.items()
            },
            window_s=load.duration_s,
            turns_completed=self.turns_completed,
            output_tokens_completed=self.output_tokens_completed,
            rollouts_started=self.rollouts_started_in_window,
            mean_in_system=self.in_system.mean(),
            in_system_at_end=self.in_system_at_end,
            wait_s_by_pool=dict(zip(POOLS, self.measured_wait_s.tolist(), strict=True)),
        )

    def measured(self) -> RolloutRecords:
        """Records of rollouts that started inside the window and finished."""
        parts = self.finished_records + [self._block_records(b) for b in self.blocks.values()]
        return concatenate(parts)

    def _block_records(self, block: _Block) -> RolloutRecords:
        # Recomputed here rather than kept from the run: a block in flight holds only
        # its compact service times, which bounds a large fleet's memory.
        cold_work, warm_work = turn_work(self.scenario, self.transport, block.turns)
        costs = stage_costs(self.scenario, cold_work.blend(warm_work, block.cold_flag))
        matrix = np.column_stack([costs.stage_s[stage] for stage in STAGES])
        matrix[:, _QUEUE_COLUMN] = block.wait_s.sum(axis=1)
        matrix[:, _DECODE_COLUMN] = block.decode_s
        ttft_s = costs.ttft_s + block.ttft_wait_s
        starts = block.turns.offsets[:-1]
        keep = (
            (block.started_at_s >= self.window_start_s)
            & (block.started_at_s < self.window_end_s)
            & np.isfinite(block.ended_at_s)
        )
        kept_turns = np.repeat(keep, np.diff(block.turns.offsets))
        self.measured_wait_s += block.wait_s[kept_turns].sum(axis=0)
        return RolloutRecords(
            e2e_s=(block.ended_at_s - block.started_at_s)[keep],
            turns=np.diff(block.turns.offsets).astype(float)[keep],
            cold_turns=np.add.reduceat(block.cold_flag, starts)[keep],
            stage_s=np.add.reduceat(matrix, starts, axis=0)[keep],
            ttft_sum_s=np.add.reduceat(ttft_s, starts)[keep],
            api_cpu_s=np.add.reduceat(costs.api_cpu_s, starts)[keep],
            safety_cpu_s=np.add.reduceat(costs.safety_cpu_s, starts)[keep],
            turn_ttft_s=ttft_s[kept_turns],
        )


def simulate_fleet(scenario: Scenario, transport: Transport, replication: int) -> Replication:
    """One replication of the fleet under ``scenario.load`` and ``scenario.capacity``.

    New rollouts start only inside the window; the run then lets started
    rollouts finish for at most as long again as the window, and no less than
    600 s (an unstable system may not; its unfinished rollouts are not measured).
    """
    return _Fleet(scenario, transport, replication).run(max(600.0, scenario.load.duration_s))
