"""A fleet's rollout, request by request through the pools: the gateway's rate limit, each
phase's pool, the batched inference phase with the parallel classifiers joined on it, the
side holding of overlapped post work, then the download, the tool and the next request's
first phase as one wait.

Pools are taken without an event when a server is free, and a grant is no event either:
``release`` starts what the waiter does next (``sim.des.pools``).  The rollout is one
generator, its turns inline, so that resuming it after each event passes through as few
frames as possible.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from models.stages import Side
from sim.des.blocks import Block
from sim.des.connections import Connection
from sim.des.kernel import Event
from sim.des.pools import ServerPool
from sim.des.side_join import join_side
from sim.turn.phases import Segments

if TYPE_CHECKING:
    from sim.des.engine import Simulation

_PARALLEL, _POST = Side.PARALLEL_SAFETY, Side.OVERLAPPED_POST


def fleet_rollout(
    sim: Simulation, session: Connection | None, organization: int
) -> Generator[Event, Any, None]:
    """The next rollout of a fleet, contending for the pools, turn by turn; on the agent's
    ``session`` connection when given, else on a new one; its requests count against
    ``organization``'s rate limit."""
    env, residency, limiter, steps = sim.env, sim.residency, sim.limiter, sim.steps
    timeout, post_pool = env.timeout, sim.post_pool
    window_start_s, window_end_s = sim.window_start_s, sim.window_end_s
    index = sim.next_rollout
    sim.next_rollout += 1
    block, local, measured, connection = sim.begin_rollout(index, session)
    cold_flag, start_at_s, waits = block.cold_flag, block.start_at_s, block.wait_s
    record_starts, is_cold = sim.record_starts, connection.is_cold
    t, end = block.offsets[local], block.offsets[local + 1]
    now_s = env.now
    if record_starts:
        start_at_s[t] = now_s
    cold = is_cold(now_s)
    cold_flag[t] = cold
    seg = block.cold if cold else block.warm
    gap_s = seg.phase_s[0][t]
    while True:
        if gap_s > 0:
            yield timeout(gap_s)
        if limiter is not None:
            tokens = block.limit_tokens[t] if block.limit_tokens else 0.0
            admission = limiter.admit(organization, tokens, seg.upload_s[t])
            block.throttle_s[t], block.refused[t] = yield from admission
        phase_s = seg.phase_s
        for phase, (pool, column, inner, inner_column, batched) in enumerate(steps, 1):
            seconds = phase_s[phase][t]
            if pool is None:
                if seconds > 0:
                    yield timeout(seconds)
                continue
            if batched:
                replica = -1
                if residency is not None:
                    replica = residency.route(index, cold)
                    pool = sim.replica_slots[replica]
                if pool.take():
                    ended, replica = _inference(sim, block, seg, t, index, seconds, replica)
                    yield ended
                else:
                    chosen = [replica]  # the replica, as chosen at the handover
                    yield _queue_for_inference(sim, pool, block, seg, t, index, seconds, chosen)
                    replica = chosen[0]
                if residency is not None:
                    residency.finish(block.history_after[t], index, replica, env.now)
                sim.replicas.leave(replica)
                pool.release()
                continue
            if seconds > 0:
                nested = seg.nested[phase]
                if nested is not None and not nested[3][t]:
                    nested = None  # this turn does not use the nested pool
                first_s = seconds if nested is None else nested[0][t]
                arrived_s = env.now
                granted_s = yield pool.hold(first_s)
                if granted_s is not None:
                    waits[t, column] = granted_s - arrived_s
                if nested is not None and inner is not None:
                    arrived_s = env.now
                    granted_s = yield inner.hold(nested[1][t])
                    if granted_s is not None:
                        waits[t, inner_column] = granted_s - arrived_s
                    inner.release()
                    yield timeout(nested[2][t])
                pool.release()
        post_s = seg.side_s[_POST][t]
        if post_s > 0:
            post_pool.hold_aside(post_s)
        download_s = phase_s[-1][t]
        if window_start_s <= env.now + download_s < window_end_s:
            sim.turns_completed += 1
            sim.output_tokens_completed += block.output_tokens[t]
        connection.release(env.now + download_s)
        gap_s = download_s + seg.tool_s[t]
        t += 1
        if t == end:
            break
        # The next request starts after the download and the tool: its variant is known now
        # (a connection's state moves only with this agent's requests).
        start_s = env.now + gap_s
        if record_starts:
            start_at_s[t] = start_s
        cold = is_cold(start_s)
        cold_flag[t] = cold
        seg = block.cold if cold else block.warm
        gap_s += seg.phase_s[0][t]
    if gap_s > 0:
        yield timeout(gap_s)
    if residency is not None:
        residency.close(index)
    sim.end_rollout(block, local, measured)


def closed_agent(
    sim: Simulation,
    organization: int,
    first_start_s: Callable[[], float],
    think_s: Callable[[], float],
    rollout_begins: Callable[[], None],
) -> Generator[Event, Any, None]:
    """An agent of a closed population: it starts after ``first_start_s()``, then runs
    rollouts back to back (``fleet_rollout``), ``think_s()`` apart, on its session
    connection if it keeps one; ``rollout_begins`` is told before each.  The rollouts run
    inline (``yield from``), so each event resumes one frame of this module's."""
    yield sim.env.timeout(first_start_s())
    session = sim.session_connection()
    while True:
        rollout_begins()
        yield from fleet_rollout(sim, session, organization)
        yield sim.env.timeout(think_s())


def _inference(
    sim: Simulation,
    block: Block,
    seg: Segments,
    t: int,
    session: int,
    prefill_s: float,
    replica: int,
) -> tuple[Event, int]:
    """Start the inference phase on a stream just taken (on ``replica`` when routed, else
    the least-loaded one) with the parallel classifiers joined on it: the event at its end
    and the replica."""
    env, residency, replicas = sim.env, sim.residency, sim.replicas
    if residency is None:
        replica, slowdown = replicas.join()
    else:
        missing = block.missing_history
        prefill_s += residency.take(block.turns, missing, t, session, replica, env.now)
        slowdown = replicas.join_at(replica)
    decode_s = seg.decode_s[t] * slowdown
    block.decode_s[t] = decode_s  # type: ignore[index]
    parallel_s, parallel = seg.side_s[_PARALLEL][t], sim.parallel_pool
    ended: Event
    if parallel_s <= 0:
        ended = env.timeout(prefill_s + decode_s)
    elif parallel.free:
        # A worker is free: the verdict comes after max(prefill, classifiers).
        parallel.hold_aside(parallel_s)
        ended = env.timeout(max(prefill_s, parallel_s) + decode_s)
    else:
        cell = (t, sim.parallel_column)
        ended = join_side(env, parallel, prefill_s, parallel_s, decode_s, block.wait_s, cell)
    return ended, replica


def _queue_for_inference(
    sim: Simulation,
    pool: ServerPool,
    block: Block,
    seg: Segments,
    t: int,
    session: int,
    prefill_s: float,
    chosen: list[int],
) -> Event:
    """Queue for a stream of ``pool`` (on replica ``chosen[0]`` when routed): the inference
    phase starts when ``release`` hands one over, in that call, and ``chosen[0]`` becomes
    its replica (no grant event: the event returned, never scheduled, hands its callbacks
    to the phase's end)."""
    env = sim.env
    ended = env.event()
    arrived_s = env.now

    def granted() -> None:
        block.wait_s[t, sim.inference_column] = env.now - arrived_s
        started, chosen[0] = _inference(sim, block, seg, t, session, prefill_s, chosen[0])
        started.callbacks.extend(ended.callbacks)  # type: ignore[union-attr,arg-type]
        ended.callbacks = None

    pool.wait(granted)
    return ended
