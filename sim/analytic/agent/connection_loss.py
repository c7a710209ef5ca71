"""Whether a turn starts on a new connection: P(turn k is cold | the rollout reaches it).

Every rollout opens its own connection, so turn 0 is cold, unless the agent
keeps its connection across rollouts (``connection.reuse_across_rollouts``):
then HTTP's turn 0 is cold when the think time exceeds the idle timeout, and
a WebSocket's age is that of a session (``sim.analytic.agent.session_connection``).

**HTTP keep-alive** (exact): turn k >= 1 is cold when the idle gap before it,
the tool time of turn k - 1, exceeds ``client.keepalive_idle_s``.

**WebSocket**: a connection opened at t0 ends at t0 + min(lifetime, D), D
exponential with rate lambda = ``ws_drops_per_hour`` / 3600; a turn starting
at or after the end is cold and reopens the connection.  Drops are
memoryless: a connection alive at the start of turn k is still alive at turn
k + 1 with probability E[e^(-lambda T_k)] if it cannot reach its lifetime
meanwhile, T_k being turn k's duration as a cold or as a warm turn.  When no
rollout can last as long as the lifetime this gives the exact recursion (an
affine one, solved for all turns at once by ``affine_scan``)

    c_(k+1) = 1 - [c_k phi_cold,k + (1 - c_k) phi_warm,k],
    phi_k = e^(-lambda d_k) E[e^(-lambda D)] E[e^(-lambda U)]

(d_k the request time without decode, D the decode time, U the tool time).
"Cannot" is checked per point: with S the start of the longest rollout's last
turn (every turn taken as the longer of its two variants), the expected number
of rotations is at most sum_m P(S >= m L) <= zeta(4) E[(S - E S)^4] / (L - E S)^4,
and the recursion is used when that bound is at most ``ROTATION_BOUND``.
Otherwise the connection's age is followed on a grid (``sim.analytic.agent.age_grid``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.analytic.agent.age_grid import grid_cold_probability
from sim.analytic.agent.columns import ObjectColumn, take_points
from sim.analytic.agent.decode_columns import decode_laplace, noise_cumulants
from sim.analytic.agent.expected_draws import ExpectedDraws
from sim.analytic.agent.layout import TurnCount, total
from sim.analytic.agent.session_connection import session_cold_probability
from sim.analytic.agent.turn_time import DecodeTime
from sim.analytic.agent.varying import held_once

ROTATION_BOUND = 1e-6
"""Expected rotations per rollout below which rotation is left out (the closed form)."""
ZETA_4 = np.pi**4 / 90


@dataclass(frozen=True)
class ColdTurns:
    """P(turn k is cold | it is reached), shape (points, turns), and how it was computed."""

    probability: np.ndarray
    from_durations: np.ndarray
    """Per point: it depends on the distribution of turn durations (drops or rotation)."""
    on_grid: np.ndarray
    """Per point: rotation was possible, so the connection's age was followed on a grid."""
    session: np.ndarray
    """Per point: the connection is kept over a session, its age that of a stationary renewal."""


def keep_alive(columns: Any, draws: ExpectedDraws, count: TurnCount) -> ColdTurns:
    """HTTP: P(the previous tool outlasted the keep-alive), 1 at turn 0."""
    idle_s = held_once(columns.client.keepalive_idle_s)  # each law's survival once if alike
    expired = draws.tool_time_s.map_with(lambda mix, idle_s: mix.survival(idle_s), idle_s)
    think_expired = columns.load.think_time_s.map_with(
        lambda law, idle_s: law.survival(idle_s), idle_s
    )
    reuse = held_once(columns.connection.reuse_across_rollouts)
    first = np.where(reuse > 0, held_once(think_expired), 1.0)
    # Where nothing here varies over the points, one row read as every point's.
    probability = np.broadcast_to(
        np.where(count.index == 0, first, held_once(expired)), count.reach.shape
    )
    no = np.zeros(columns.points, dtype=bool)
    return ColdTurns(probability, from_durations=no, on_grid=no, session=no)


def websocket(
    columns: Any,
    draws: ExpectedDraws,
    count: TurnCount,
    cold_s: np.ndarray,
    warm_s: np.ndarray,
) -> ColdTurns:
    """WebSocket rotation and drops; ``cold_s``/``warm_s`` (points, turns) are each turn's
    request time without decode as a cold and as a warm turn."""
    c = columns.connection
    drops_per_s = c.ws_drops_per_hour / 3600.0
    lifetime_s = c.ws_lifetime_s
    steps = np.count_nonzero(count.reach[:, 1:] > 0, axis=1)
    session = columns.connection.reuse_across_rollouts[:, 0] > 0
    noise = noise_cumulants(draws.output_tokens, draws.decode_tps, draws.tool_time_s)
    rotations = _rotation_bound(noise, steps, cold_s, warm_s, lifetime_s)
    on_grid = ~session & (rotations > ROTATION_BOUND)
    # Without drops nothing is lost between turns: exactly 1, not a quadrature's 1 - 1e-16.
    random_part = decode_laplace(
        draws.output_tokens, draws.decode_tps, drops_per_s
    ) * draws.tool_time_s.map_with(_laplace, held_once(drops_per_s))
    random_part = np.where(drops_per_s > 0, random_part, 1.0)
    survive_cold = np.exp(-drops_per_s * cold_s) * random_part
    survive_warm = np.exp(-drops_per_s * warm_s) * random_part
    probability = np.ones(count.reach.shape)
    probability[:, 1:] = affine_scan(1.0 - survive_warm, survive_warm - survive_cold)[:, :-1]
    for point in np.flatnonzero(on_grid).tolist():
        n = steps[point]
        probability[point, : n + 1] = grid_cold_probability(
            _decode_time(draws, point),
            draws.tool_time_s.values[draws.tool_time_s.index[point]],
            float(drops_per_s[point, 0]),
            float(lifetime_s[point, 0]),
            cold_s[point, :n],
            warm_s[point, :n],
        )
    if session.any():
        rows = np.flatnonzero(session)
        probability[rows] = session_cold_probability(
            take_points(columns, rows),
            ObjectColumn.zip(draws.output_tokens, draws.decode_tps)
            .take(rows)
            .convert(lambda parts: DecodeTime(*parts)),
            draws.tool_time_s.take(rows),
            TurnCount(count.reach[rows], count.last[rows]),
            cold_s[rows],
            warm_s[rows],
        )
    return ColdTurns(
        probability,
        from_durations=(drops_per_s[:, 0] > 0) | on_grid,
        on_grid=on_grid,
        session=session,
    )


def affine_scan(offset: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """x_(k+1) = offset_k + slope_k x_k from x_0 = 1, for every k along the last axis.

    The maps x -> offset + slope x are composed by doubling (log2(turns) steps
    over whole arrays, not one step per turn); element k of the result is x_(k+1).
    The steps run on turn-major copies, so each shifted slice is one contiguous run.
    """
    offset = np.ascontiguousarray(np.moveaxis(offset, -1, 0))
    slope = np.ascontiguousarray(np.moveaxis(slope, -1, 0))
    shift = 1
    while shift < offset.shape[0]:
        # offset[shift:] + slope[shift:] * offset[:-shift], written over offset[shift:]
        step = np.multiply(slope[shift:], offset[:-shift])
        np.add(offset[shift:], step, out=offset[shift:])
        np.multiply(slope[shift:], slope[:-shift], out=slope[shift:])  # overlap: buffered
        shift *= 2
    return np.moveaxis(offset + slope, 0, -1)


def _laplace(distribution: Any, s: np.ndarray) -> np.ndarray:
    return distribution.laplace(s)


def _decode_time(draws: ExpectedDraws, point: int) -> DecodeTime:
    """One point's decode time."""
    tokens, rates = draws.output_tokens, draws.decode_tps
    return DecodeTime(tokens.values[tokens.index[point]], rates.values[rates.index[point]])


def _rotation_bound(
    noise: np.ndarray,
    steps: np.ndarray,
    cold_s: np.ndarray,
    warm_s: np.ndarray,
    lifetime_s: np.ndarray,
) -> np.ndarray:
    """Per point, a bound on the expected rotations in a rollout (see the module docstring)."""
    mean_s, variance, fourth = noise.T
    before_last = np.arange(cold_s.shape[1]) < steps[:, None]
    start_s = total(np.where(before_last, np.maximum(cold_s, warm_s), 0.0)) + steps * mean_s
    spread = steps * variance
    central_4 = steps * fourth + 3.0 * spread * spread
    margin_s = lifetime_s[:, 0] - start_s
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = ZETA_4 * central_4 / margin_s**4
    return np.where(margin_s > 0, bound, np.inf)
