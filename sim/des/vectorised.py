"""One agent without contention as array passes: the DES's single-agent run, no event queue.

An agent alone never waits for anything but its own requests and tools, so
its timeline is a running sum of durations: each rollout's think time (when
it keeps its connection), then each turn's request and tool.  The only state
that carries from turn to turn is the connection's, and it is read off that
timeline: an HTTP keep-alive connection is cold when the gap since its last
response exceeds the idle timeout; a WebSocket is cold once the clock passes
the end its last opening drew (its lifetime, or a drop from the block's fault
stream, drawn in the order connections open).  Which turns are cold changes
the timeline (a cold request takes longer), so the cold set and the timeline
are solved together: a turn's flag depends only on earlier turns, so each
round fixes at least the first turn that was wrong, and in practice the second
round finds nothing to change.

Same streams and draws as ``sim.des.engine.Simulation.rollouts``, the same
additions in the same order (SimPy's clock is ``now + delay``; a cumulative
sum adds the same numbers one by one), so the records are the DES's own.  It
serves the plain mode only: KV residency routes requests through replicas and
stays on the event queue.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields

import numpy as np

from models.costs import TurnCosts, stage_costs
from models.scenario import Scenario
from models.stages import STAGES, Stage
from models.work import Work
from sim.des.blocks import RanTurns, sum_rollouts
from sim.des.draws import draw_turns
from sim.des.streams import Draw, stream
from sim.des.timeline import Layout, Timeline
from sim.turn.records import RolloutRecords
from sim.turn.transports import (
    Transport,
    cached_prompt_tokens,
    cold_turn_work,
    compaction_work,
    warm_turn_work,
)
from sim.turn.turns import Turns

_DRAW_CHUNK = 256
"""Fault draws taken at a time (a block's stream serves only its connections)."""


def applies(scenario: Scenario) -> bool:
    """True when one agent's run needs no event queue (KV residency needs one)."""
    return not scenario.kv_cache.residency


def simulate_block(
    scenario: Scenario, transport: Transport, block_index: int, count: int, keep_turns: bool
) -> RolloutRecords:
    """The first ``count`` rollouts of block ``block_index``, as the DES runs them alone."""
    turns = draw_turns(scenario, block_index, count)
    variants = _Variants(scenario, transport, turns)
    session = scenario.connection.reuse_across_rollouts
    firsts = np.array([0]) if session else turns.offsets[:-1]
    think_s = _think_s(scenario, block_index, count) if session else np.zeros(count)
    connection = _connection_rule(scenario, transport, block_index)
    layout = Layout(turns.offsets)
    cold = np.zeros(turns.count, dtype=bool)
    cold[firsts] = True
    while True:
        timeline = layout.timeline(variants.request_s(cold), variants.tool_s, think_s)
        found = connection(timeline, firsts)
        if np.array_equal(found, cold):
            break
        cold = found
    every = np.ones(count, dtype=bool)
    return sum_rollouts(
        variants.ran(turns, block_index, cold, timeline, keep_turns),
        every,
        every if keep_turns else None,
    )


class _Variants:
    """Warm costs of every turn; cold work and costs of the turns that run cold, computed
    on demand (a turn's work is its own: the cold turns' work is their rows' work)."""

    def __init__(self, scenario: Scenario, transport: Transport, turns: Turns) -> None:
        self.scenario, self.transport, self.turns = scenario, transport, turns
        warm_work = warm_turn_work(scenario, transport, turns)
        self.cold_compaction: Work | None = None
        warm_compaction: Work | None = None
        if scenario.compaction.compacts:
            self.cold_compaction, warm_compaction = compaction_work(scenario, transport, turns)
        self.warm = stage_costs(scenario, warm_work, compaction=warm_compaction)
        self.warm_request_s = self.warm.request_s
        self.tool_s = self.warm.stage_s[Stage.TOOL]
        self.uncached_warm = warm_work.prompt_tokens_uncached
        self._cold_rows: np.ndarray | None = None
        self._cold: tuple[Work, TurnCosts] | None = None

    def _of_rows(self, rows: np.ndarray) -> tuple[Work, TurnCosts]:
        work = cold_turn_work(self.scenario, self.transport, _turn_rows(self.turns, rows))
        compaction = None if self.cold_compaction is None else _rows(self.cold_compaction, rows)
        return work, stage_costs(self.scenario, work, compaction=compaction)

    def cold(self, rows: np.ndarray) -> tuple[Work, TurnCosts]:
        """The cold work and costs of the turns at ``rows``."""
        known = self._cold_rows
        if self._cold is None or known is None or not np.array_equal(rows, known):
            self._cold_rows, self._cold = rows, self._of_rows(rows)
        return self._cold

    def request_s(self, cold: np.ndarray) -> np.ndarray:
        rows = np.flatnonzero(cold)
        seconds = self.warm_request_s.copy()
        seconds[rows] = self.cold(rows)[1].request_s
        return seconds

    def ran(
        self, turns: Turns, block_index: int, cold: np.ndarray, line: Timeline, keep_turns: bool
    ) -> RanTurns:
        rows = np.flatnonzero(cold)
        cold_work, cold_costs = self.cold(rows)
        starts = turns.offsets[:-1]
        # Each stage's column summed per rollout as it is filled in; the whole
        # matrix only where the turns' rows are kept.
        stage_s = np.empty((len(STAGES), turns.count)) if keep_turns else None
        sums_s = np.empty((len(STAGES), len(starts)))
        column = np.empty(turns.count)
        for index, stage in enumerate(STAGES):
            seconds = column if stage_s is None else stage_s[index]
            np.copyto(seconds, self.warm.stage_s[stage])
            seconds[rows] = cold_costs.stage_s[stage]
            np.add.reduceat(seconds, starts, out=sums_s[index])
        costs = TurnCosts(
            stage_s={},
            ttft_s=_put(self.warm.ttft_s, rows, cold_costs.ttft_s),
            api_cpu_s=_put(self.warm.api_cpu_s, rows, cold_costs.api_cpu_s),
            safety_cpu_s=_put(self.warm.safety_cpu_s, rows, cold_costs.safety_cpu_s),
            post_overlapped_s=_put(self.warm.post_overlapped_s, rows, cold_costs.post_overlapped_s),
            safety_parallel_s=_put(self.warm.safety_parallel_s, rows, cold_costs.safety_parallel_s),
        )
        uncached = _put(self.uncached_warm, rows, cold_work.prompt_tokens_uncached)
        return RanTurns(
            turns=turns,
            block_index=block_index,
            stage_s=None if stage_s is None else stage_s.T,
            stage_sums_s=sums_s.T,
            ttft_s=costs.ttft_s,
            costs=costs,
            cached_prompt_tokens=cached_prompt_tokens(self.scenario, turns),
            uncached_prompt_tokens=uncached,
            cold_flag=cold.astype(float),
            start_at_s=line.request_start_s,
            started_at_s=line.rollout_start_s,
            ended_at_s=line.rollout_end_s,
        )


def _connection_rule(
    scenario: Scenario, transport: Transport, block_index: int
) -> Callable[[Timeline, np.ndarray], np.ndarray]:
    """The cold flags a timeline gives, by the transport's kind of connection."""
    if not transport.is_websocket:
        idle_s = scenario.client.keepalive_idle_s
        return lambda line, firsts: _keepalive_cold(line, firsts, idle_s)
    c = scenario.connection
    faults = stream(scenario.seed, block_index, Draw.CONNECTION_FAULTS)
    mean_s = 3600.0 / c.ws_drops_per_hour if c.ws_drops_per_hour > 0 else math.inf
    drops = _Drops(faults, mean_s)
    return lambda line, firsts: _websocket_cold(line, firsts, c.ws_lifetime_s, drops)


def _keepalive_cold(line: Timeline, firsts: np.ndarray, idle_s: float) -> np.ndarray:
    """A keep-alive request is cold on a new connection or after an idle gap too long."""
    gap_s = np.empty_like(line.request_start_s)
    gap_s[0] = math.inf
    gap_s[1:] = line.request_start_s[1:] - line.request_end_s[:-1]
    cold = gap_s > idle_s
    cold[firsts] = True
    return cold


class _Drops:
    """The block's connection drops, the k-th for the k-th connection opened."""

    def __init__(self, rng: np.random.Generator, mean_s: float) -> None:
        self._rng, self._mean_s = rng, mean_s
        self._drawn = np.zeros(0)

    def after_s(self, first: int, count: int) -> np.ndarray:
        """Time to drop of connections ``first`` .. ``first + count - 1`` (inf: no drops)."""
        if not math.isfinite(self._mean_s):
            return np.full(count, math.inf)
        while len(self._drawn) < first + count:
            more = max(_DRAW_CHUNK, first + count - len(self._drawn))
            self._drawn = np.concatenate([self._drawn, self._rng.exponential(self._mean_s, more)])
        return self._drawn[first : first + count]


def _websocket_cold(
    line: Timeline, firsts: np.ndarray, lifetime_s: float, drops: _Drops
) -> np.ndarray:
    """A WebSocket request is cold on a new connection or once the last one has ended.

    Chains (a rollout each, or the whole block for a session) are first taken to open
    once, all together; the first chain where a later request finds its connection
    ended is walked opening by opening, and the chains after it are taken again.  The
    clock only moves on, so a chain finds its connection ended if its last request does.
    """
    start_s = line.request_start_s
    total = len(start_s)
    ends = np.append(firsts[1:], total)
    last_start_s = start_s[ends - 1]
    cold = np.zeros(total, dtype=bool)
    opened, chain = 0, 0
    while chain < len(firsts):
        heads = firsts[chain:]
        end_at_s = start_s[heads] + np.minimum(lifetime_s, drops.after_s(opened, len(heads)))
        expired = (last_start_s[chain:] >= end_at_s) & (ends[chain:] - heads > 1)
        if not expired.any():
            cold[heads] = True
            break
        broken = chain + int(np.argmax(expired))
        cold[firsts[chain : broken + 1]] = True
        opened += broken + 1 - chain
        turn, end = int(firsts[broken]) + 1, int(ends[broken])
        turn += int(np.searchsorted(start_s[turn:end], end_at_s[broken - chain], side="left"))
        while turn < end:
            cold[turn] = True
            end_at_s = start_s[turn] + min(lifetime_s, float(drops.after_s(opened, 1)[0]))
            opened += 1
            turn += 1 + int(np.searchsorted(start_s[turn + 1 : end], end_at_s, side="left"))
        chain = broken + 1
    return cold


def _think_s(scenario: Scenario, block_index: int, count: int) -> np.ndarray:
    """Pauses before each rollout of a session (none before the first), drawn one by one
    as the DES draws them."""
    rng = stream(scenario.seed, block_index, Draw.THINK_TIME)
    think = scenario.load.think_time_s
    return np.array([0.0] + [float(think.sample(rng, 1)[0]) for _ in range(count - 1)])


def _turn_rows(turns: Turns, rows: np.ndarray) -> Turns:
    """The turns at ``rows``, their per-turn arrays taken (the offsets no longer apply)."""
    per_turn = {
        name: getattr(turns, name)[rows]
        for name in turns.__dataclass_fields__
        if name not in ("offsets", "fixed_tokens") and getattr(turns, name) is not None
    }
    return Turns(**per_turn, offsets=turns.offsets, fixed_tokens=turns.fixed_tokens)


def _rows(work: Work, rows: np.ndarray) -> Work:
    return Work(**{f.name: _take(getattr(work, f.name), rows) for f in fields(work)})


def _take(values: np.ndarray | float, rows: np.ndarray) -> np.ndarray:
    return np.asarray(values)[rows] if np.ndim(values) else np.full(len(rows), values)


def _put(values: np.ndarray, rows: np.ndarray, replacement: np.ndarray) -> np.ndarray:
    out = np.array(values, dtype=float)
    out[rows] = replacement
    return out
