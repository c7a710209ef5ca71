# cython: language_level=3, boundscheck=True, wraparound=False
"""The compiled twin of ``sim.des.fleet_turn`` (``sim.des.compiled``): the same rollout,
line for line, with its clock, indices and seconds in C variables and a turn's seconds
read straight from their ``array.array`` (``sim.turn.phases.Segments``).

Every event and every arithmetic step is the ``.py``'s, in the same order;
``tests/test_compiled.py`` runs both and compares every record bit for bit.
"""

from cpython cimport array
from models.stages import Side
from sim.des.kernel cimport Environment, Event, Timeout
from sim.des.pools cimport ServerPool
from sim.des.side_join cimport join_side

_PARALLEL, _POST = Side.PARALLEL_SAFETY, Side.OVERLAPPED_POST


def fleet_rollout(sim, session, organization):
    """The next rollout of a fleet, contending for the pools, turn by turn (the ``.py``'s
    ``fleet_rollout``)."""
    cdef Environment env = sim.env
    cdef ServerPool pool, inner, post_pool = sim.post_pool
    cdef double window_start_s = sim.window_start_s, window_end_s = sim.window_end_s
    cdef double gap_s, now_s, seconds, first_s, arrived_s, post_s, download_s, start_s
    cdef long t, end, phase, column, inner_column, replica
    cdef list cold_flag, start_at_s, steps, phase_s
    cdef double[:, :] waits
    cdef bint record_starts, cold, batched
    cdef array.array arr
    cdef Event ended
    residency, limiter, steps = sim.residency, sim.limiter, sim.steps
    index = sim.next_rollout
    sim.next_rollout += 1
    block, local, measured, connection = sim.begin_rollout(index, session)
    cold_flag, start_at_s, waits = block.cold_flag, block.start_at_s, block.wait_s
    record_starts, is_cold = sim.record_starts, connection.is_cold
    t, end = block.offsets[local], block.offsets[local + 1]
    cdef array.array output_tokens = block.output_tokens
    nsteps = len(steps)
    now_s = env.now
    if record_starts:
        start_at_s[t] = now_s
    cold = is_cold(now_s)
    cold_flag[t] = cold
    seg = block.cold if cold else block.warm
    phase_s = seg.phase_s
    arr = phase_s[0]
    gap_s = arr.data.as_doubles[t]
    while True:
        if gap_s > 0:
            yield env.timeout(gap_s)
        if limiter is not None:
            tokens = block.limit_tokens[t] if block.limit_tokens else 0.0
            admission = limiter.admit(organization, tokens, seg.upload_s[t])
            block.throttle_s[t], block.refused[t] = yield from admission
        phase_s = seg.phase_s
        for phase in range(1, nsteps + 1):
            step = <tuple>steps[phase - 1]
            arr = phase_s[phase]
            seconds = arr.data.as_doubles[t]
            if step[0] is None:
                if seconds > 0:
                    yield env.timeout(seconds)
                continue
            pool = step[0]
            batched = step[4]
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
                column = step[1]
                nested = seg.nested[phase]
                if nested is not None and not nested[3][t]:
                    nested = None  # this turn does not use the nested pool
                if nested is None:
                    first_s = seconds
                else:
                    arr = nested[0]
                    first_s = arr.data.as_doubles[t]
                arrived_s = env.now
                granted_s = yield pool.hold(first_s)
                if granted_s is not None:
                    waits[t, column] = <double>granted_s - arrived_s
                if nested is not None and step[2] is not None:
                    inner = step[2]
                    inner_column = step[3]
                    arrived_s = env.now
                    arr = nested[1]
                    granted_s = yield inner.hold(arr.data.as_doubles[t])
                    if granted_s is not None:
                        waits[t, inner_column] = <double>granted_s - arrived_s
                    inner.release()
                    arr = nested[2]
                    yield env.timeout(arr.data.as_doubles[t])
                pool.release()
        arr = seg.side_s[_POST]
        post_s = arr.data.as_doubles[t]
        if post_s > 0:
            post_pool.hold_aside(post_s)
        arr = phase_s[len(phase_s) - 1]
        download_s = arr.data.as_doubles[t]
        if window_start_s <= env.now + download_s < window_end_s:
            sim.turns_completed += 1
            sim.output_tokens_completed += output_tokens.data.as_doubles[t]
        connection.release(env.now + download_s)
        arr = seg.tool_s
        gap_s = download_s + arr.data.as_doubles[t]
        t += 1
        if t == end:
            break
        start_s = env.now + gap_s
        if record_starts:
            start_at_s[t] = start_s
        cold = is_cold(start_s)
        cold_flag[t] = cold
        seg = block.cold if cold else block.warm
        phase_s = seg.phase_s
        arr = phase_s[0]
        gap_s += arr.data.as_doubles[t]
    if gap_s > 0:
        yield env.timeout(gap_s)
    if residency is not None:
        residency.close(index)
    sim.end_rollout(block, local, measured)


def closed_agent(sim, organization, first_start_s, think_s, rollout_begins):
    """An agent of a closed population (the ``.py``'s ``closed_agent``)."""
    cdef Environment env = sim.env
    yield env.timeout(first_start_s())
    session = sim.session_connection()
    while True:
        rollout_begins()
        yield from fleet_rollout(sim, session, organization)
        yield env.timeout(think_s())


cdef _inference(sim, block, seg, long t, session, double prefill_s, long replica):
    """The inference phase on a stream just taken, with the parallel classifiers joined on
    it: the event at its end and the replica (the ``.py``'s ``_inference``)."""
    cdef Environment env = sim.env
    cdef ServerPool parallel
    cdef double decode_s, parallel_s
    cdef array.array arr
    cdef Event ended
    residency, replicas = sim.residency, sim.replicas
    if residency is None:
        replica, slowdown = replicas.join()
    else:
        missing = block.missing_history
        prefill_s += residency.take(block.turns, missing, t, session, replica, env.now)
        slowdown = replicas.join_at(replica)
    arr = seg.decode_s
    decode_s = arr.data.as_doubles[t] * <double>slowdown
    arr = block.decode_s
    arr.data.as_doubles[t] = decode_s
    arr = seg.side_s[_PARALLEL]
    parallel_s = arr.data.as_doubles[t]
    parallel = sim.parallel_pool
    if parallel_s <= 0:
        ended = env.timeout(prefill_s + decode_s)
    elif parallel.free:
        parallel.hold_aside(parallel_s)
        ended = env.timeout(max(prefill_s, parallel_s) + decode_s)
    else:
        cell = (t, sim.parallel_column)
        ended = join_side(env, parallel, prefill_s, parallel_s, decode_s, block.wait_s, cell)
    return ended, replica


cdef Event _queue_for_inference(
    sim, ServerPool pool, block, seg, long t, session, double prefill_s, list chosen
):
    """Queue for a stream of ``pool``: the phase starts when ``release`` hands one over (the
    ``.py``'s ``_queue_for_inference``)."""
    cdef Environment env = sim.env
    cdef Event ended = env.event()
    cdef double arrived_s = env.now

    def granted():
        block.wait_s[t, sim.inference_column] = env.now - arrived_s
        started, chosen[0] = _inference(sim, block, seg, t, session, prefill_s, chosen[0])
        started.callbacks.extend(ended.callbacks)
        ended.callbacks = None

    pool.wait(granted)
    return ended
