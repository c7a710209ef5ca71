"""A fleet's request through the pools: the gateway's rate limit, each phase's pool, the
batched inference phase with the parallel classifiers joined on it, then the side
holding of overlapped post work; the download is left to the rollout.

Pools are taken without an event when a server is free; a wait is one event (the grant).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from models.stages import Side
from sim.des.blocks import Block
from sim.des.kernel import Event
from sim.des.pools import ServerPool, join_side
from sim.turn.phases import Segments

if TYPE_CHECKING:
    from sim.des.engine import Simulation

_PARALLEL, _POST = Side.PARALLEL_SAFETY, Side.OVERLAPPED_POST


def contended_turn(
    sim: Simulation,
    block: Block,
    seg: Segments,
    t: int,
    session: int,
    cold: bool,
    organization: int,
) -> Generator[Event, Any, float]:
    """One request from the gateway's rate limit up to its download, which it returns."""
    env, waits, residency = sim.env, block.wait_s, sim.residency
    if sim.limiter is not None:
        tokens = block.limit_tokens[t] if block.limit_tokens else 0.0
        admission = sim.limiter.admit(organization, tokens, seg.upload_s[t])
        block.throttle_s[t], block.refused[t] = yield from admission
    for index, (pool, column, inner, inner_column, batched) in enumerate(sim.steps, 1):
        seconds = seg.phase_s[index][t]
        if pool is None:
            if seconds > 0:
                yield env.timeout(seconds)
            continue
        if batched:
            replica = -1
            if residency is not None:
                replica = residency.route(session, cold)
                pool = sim.replica_slots[replica]
            if pool.take():
                yield _inference(sim, pool, block, seg, t, session, seconds, replica)
            else:
                yield _queue_for_inference(sim, pool, block, seg, t, session, seconds, replica)
            continue
        if seconds > 0:
            nested = seg.nested[index]
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
                yield env.timeout(nested[2][t])
            pool.release()
    post_s = seg.side_s[_POST][t]
    if post_s > 0:
        sim.post_pool.hold_aside(post_s)
    download_s = seg.phase_s[-1][t]
    if sim.window_start_s <= env.now + download_s < sim.window_end_s:
        sim.turns_completed += 1
        sim.output_tokens_completed += block.output_tokens[t]
    return download_s


def _inference(
    sim: Simulation,
    pool: ServerPool,
    block: Block,
    seg: Segments,
    t: int,
    session: int,
    prefill_s: float,
    replica: int,
) -> Event:
    """Start the inference phase on a stream just taken from ``pool`` (on ``replica`` when
    routed, else the least-loaded one) with the parallel classifiers joined on it; the event
    at its end, which gives the stream back before the turn resumes."""
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

    def give_back(_event: Event) -> None:
        if residency is not None:
            residency.finish(block.history_after[t], session, replica, env.now)
        replicas.leave(replica)
        pool.release()

    ended.callbacks.append(give_back)  # type: ignore[union-attr]
    return ended


def _queue_for_inference(
    sim: Simulation,
    pool: ServerPool,
    block: Block,
    seg: Segments,
    t: int,
    session: int,
    prefill_s: float,
    replica: int,
) -> Event:
    """Queue for a stream of ``pool``: the inference phase starts when ``release`` hands one
    over, in that call (no grant event: the event returned, never scheduled, hands its
    callbacks to the phase's end)."""
    env = sim.env
    ended = env.event()
    arrived_s = env.now

    def granted() -> None:
        block.wait_s[t, sim.inference_column] = env.now - arrived_s
        started = _inference(sim, pool, block, seg, t, session, prefill_s, replica)
        started.callbacks.extend(ended.callbacks)  # type: ignore[union-attr,arg-type]
        ended.callbacks = None

    pool.wait(granted)
    return ended
