"""The analytic engine's KV residency: P(a turn finds its session's history on its replica).

One agent meets no other, so nothing evicts its history but its own
time-to-live: turn k >= 1 finds it when the request lands on the replica that
served turn k - 1 and the tool gap between them is within ``kv_cache.ttl_s``.
The gap is taken as the tool's time (the request's own seconds around it are
tens of milliseconds against a time-to-live of minutes), and a prefix left on a
replica by an earlier visit than the last turn counts as missing; both are
why ``Approximation.PREFIX_RESIDENCY`` applies.  In the simple mode every
history is resident.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.kv_cache import Routing
from sim.analytic.agent.expected_draws import ExpectedDraws
from sim.turn.transports import Transport


def history_resident(columns: Any, draws: ExpectedDraws, transport: Transport) -> np.ndarray:
    """P(turn k >= 1 finds its whole history), shape (points, 1); 1 in the simple mode."""
    kv = columns.kv_cache
    on = kv.residency[:, 0] > 0
    out = np.ones((columns.points, 1))
    if not on.any():
        return out
    routing = kv.ws_routing if transport.is_websocket else kv.http_routing
    replicas = columns.capacity.inference_replicas[:, 0]
    same = routing.map_with(same_replica, replicas)
    ttl_s = kv.ttl_s[:, 0]
    within = 1.0 - draws.tool_time_s.map_with(lambda tool, ttl: tool.survival(ttl), ttl_s)
    out[on, 0] = (same * within)[on]
    return out


def same_replica(routing: Routing, replicas: np.ndarray) -> np.ndarray:
    """P(one agent's next request lands on the replica of its last one) under ``routing``."""
    if routing is Routing.RANDOM:
        return 1.0 / replicas
    if routing is Routing.ROUND_ROBIN:
        return (replicas == 1).astype(float)
    return np.ones_like(replicas)
