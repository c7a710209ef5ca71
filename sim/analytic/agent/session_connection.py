"""P(a request opens a new connection) when an agent keeps its WebSocket across rollouts.

The connection then lives over the agent's whole session: it ends at
min(lifetime L, a drop D ~ exponential(lambda)) after it opened, and the
first request after its end reopens it.  Its age at a request is no longer
0 at turn 0; it is taken from the stationary renewal process of the
connection's life X = min(L, D), whose age density is P(X > a) / E[X] =
lambda e^(-lambda a) / (1 - e^(-lambda L)) on [0, L).  A request that comes
I after the previous one finds the connection gone if it dropped meanwhile
or its age crossed L, so

    P(cold | I) = (1 - E[e^(-lambda I)]) / (1 - e^(-lambda L)),   E[I] / L without drops

(at most 1).  This neglects the delay between a connection's end and the
request that notices it (of order E[I^2] / (2 E[I]) against E[X]), so it
holds while requests are much closer together than the lifetime
(``docs/model/analytic.md`` gives its measured error).

The interval before turn k >= 1 is turn k - 1 (its request without decode d,
cold or warm, its decode D and its tool U); the interval before turn 0 is the
previous rollout's last turn (d and D, no tool) plus the think time.  Each
P(cold) is affine in the previous turn's, so turn k's is a_k + b_k c_0 and
c_0 follows from the previous rollout, of the same law: one linear equation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.analytic.agent.layout import TurnCount, total
from sim.analytic.agent.turn_time import cumulants


def session_cold_probability(
    columns: Any,
    decode: Any,
    tool_s: Any,
    count: TurnCount,
    cold_s: np.ndarray,
    warm_s: np.ndarray,
) -> np.ndarray:
    """P(turn k is cold | reached), shape (points, turns), for a connection kept over a session.

    ``decode`` and ``tool_s`` are ObjectColumns of each point's decode-time and tool-time
    laws; ``cold_s``/``warm_s`` (points, turns) each turn's request time without decode.
    """
    c = columns.connection
    drops_per_s, lifetime_s = c.ws_drops_per_hour / 3600.0, c.ws_lifetime_s
    think = columns.load.think_time_s
    decode_part = _random_part(decode, drops_per_s)
    tool_part = _random_part(tool_s, drops_per_s)
    think_part = _random_part(think, drops_per_s)

    def cold_after(request_s: np.ndarray, part: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        laplace, mean_s = part
        survive = np.exp(-drops_per_s * request_s) * laplace
        with np.errstate(divide="ignore", invalid="ignore"):
            renewal = (1.0 - survive) / -np.expm1(-drops_per_s * lifetime_s)
        probability = np.where(drops_per_s > 0, renewal, (request_s + mean_s) / lifetime_s)
        return np.clip(probability, 0.0, 1.0)

    within = _product(decode_part, tool_part)
    after_cold, after_warm = cold_after(cold_s, within), cold_after(warm_s, within)
    # c_(k+1) = after_warm_k + c_k (after_cold_k - after_warm_k) = a_(k+1) + b_(k+1) c_0.
    slope = np.cumprod(after_cold - after_warm, axis=1)
    offset = np.zeros_like(slope)
    level = np.zeros(slope.shape[0])
    for k in range(slope.shape[1]):
        level = after_warm[:, k] + (after_cold[:, k] - after_warm[:, k]) * level
        offset[:, k] = level
    a = np.concatenate([np.zeros((slope.shape[0], 1)), offset[:, :-1]], axis=1)
    b = np.concatenate([np.ones((slope.shape[0], 1)), slope[:, :-1]], axis=1)
    gap = _product(decode_part, think_part)
    last_cold, last_warm = cold_after(cold_s, gap), cold_after(warm_s, gap)
    ends_here = count.reach * count.last
    spread = ends_here * (last_cold - last_warm)
    first = (total(ends_here * last_warm) + total(spread * a)) / (1.0 - total(spread * b))
    return np.clip(a + b * first[:, None], 0.0, 1.0)


def _random_part(law: Any, drops_per_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[e^(-lambda X)] and E[X] of each point's law, shape (points, 1)."""
    laplace = law.map_with(lambda x, s: x.laplace(s), drops_per_s)
    laplace = np.where(drops_per_s > 0, laplace, 1.0)
    mean_s = law.map(lambda x: cumulants(x)[0])[:, None]
    return laplace, mean_s


def _product(
    one: tuple[np.ndarray, np.ndarray], other: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The Laplace transform and mean of the sum of two independent parts."""
    return one[0] * other[0], one[1] + other[1]
