"""KV residency turn by turn: the history each turn finds on the replica its request lands on.

Turn k lands on a replica by its transport's routing.  What that replica holds
of the session is what the session wrote there at its last visit, turn k - j
(the history after that turn: a stale copy when j > 1, so a partial hit), if
the entry outlived the window between that write (decode end) and this
request's prefill: within the time-to-live and not evicted
(``sim.analytic.agent.replica_memory``).  So

    E[held_k] = sum_j P(last visit j turns ago) E[h_(k-j) 1{kept over W_(k,j)}],

and the turn prefills again what is missing, prior_k - held_k.  The windows and
sizes come from the engine's own expected turns (``TurnTable``): W_(k,1) is
the end of turn k - 1 (download), its tool (a quadrature over the tool mix) and
the start of turn k up to prefill; longer windows add whole turns, their
tools at their mean.  A history's size is taken as normal around its expected
value with the variance of its turns' growth.

Routing, per policy: ``affinity``, ``consistent-hash`` and (for one agent,
whose requests always find every replica idle) ``least-loaded`` come back to
the same replica, j = 1; ``random`` (and, in a fleet, ``round-robin`` and
``least-loaded``, whose choices do not follow the session) comes back after a
geometric number of turns, P(j) = (1/R)(1 - 1/R)^(j-1); one agent's
``round-robin`` after exactly R turns.  Reconnects under affinity are left out
(at 0.5 drops an hour, a few per thousand rollouts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.kv_cache import Eviction, Routing
from models.stages import STAGES, Stage
from sim.analytic.agent.replica_memory import (
    LruStack,
    Neighbours,
    generating,
    pinned_kept,
    pinned_occupancy,
)
from sim.analytic.agent.token_grid import Sizes, TokenGrid
from sim.analytic.agent.turn_table import TurnTable
from sim.turn.transports import Transport

WINDOW_NODES = 16
"""Quadrature nodes over the tool time of a one-turn window."""
_BEFORE_PREFILL = STAGES[: STAGES.index(Stage.PREFILL)]
_SAME_REPLICA = (Routing.AFFINITY, Routing.CONSISTENT_HASH)


@dataclass(frozen=True)
class KvSetting:
    """One transport's KV residency parameters of one point."""

    capacity_tokens: float
    """A replica's KV memory in tokens, the shared prefix set aside."""
    ttl_s: float
    pinned: bool
    routing: Routing
    replicas: int

    @classmethod
    def of_point(cls, columns: Any, point: int, transport: Transport) -> KvSetting:
        kv, w = columns.kv_cache, columns.workload
        routing = kv.ws_routing if transport.is_websocket else kv.http_routing
        eviction = kv.eviction.values[kv.eviction.index[point]]
        shared = w.instructions_tokens[point, 0] + w.tool_definitions_tokens[point, 0]
        i = columns.inference
        return cls(
            capacity_tokens=max(
                0.0, i.kv_memory_bytes[point, 0] / i.kv_bytes_per_token[point, 0] - shared
            ),
            ttl_s=float(kv.ttl_s[point, 0]),
            pinned=eviction is Eviction.TTL_PIN,
            routing=routing.values[routing.index[point]],
            replicas=int(columns.capacity.inference_replicas[point, 0]),
        )


class Memory:
    """What a replica keeps of an entry: ``kept(sizes, windows_s)``, shape (windows, atoms)."""

    def __init__(self, kept: Callable[[Sizes, np.ndarray], np.ndarray]) -> None:
        self.kept = kept

    @classmethod
    def lru(cls, grid: TokenGrid, neighbours: Neighbours) -> Memory:
        return cls(LruStack(grid, neighbours).kept)

    @classmethod
    def pinned(cls, grid: TokenGrid, offered: Sizes) -> Memory:
        occupancy = pinned_occupancy(grid, offered)

        def kept(own: Sizes, windows_s: np.ndarray) -> np.ndarray:
            fits = pinned_kept(grid, occupancy, own)
            return np.broadcast_to(fits, (np.size(windows_s), fits.size))

        return cls(kept)


def revisits(routing: Routing, replicas: int, turns: int, fleet: bool) -> np.ndarray:
    """P(the replica of turn k was last visited at turn k - j), shape (turns, turns + 1) over
    j = 0 .. turns (j = 0: never visited before, or turn 0)."""
    k = np.arange(turns)[:, None]
    j = np.arange(turns + 1)[None, :]
    out = np.zeros((turns, turns + 1))
    same = routing in _SAME_REPLICA or (routing is Routing.LEAST_LOADED and not fleet)
    if same or replicas == 1:
        out[1:, 1] = 1.0
    elif routing is Routing.ROUND_ROBIN and not fleet:
        if replicas < turns:
            out[:, replicas] = (k[:, 0] >= replicas).astype(float)
    else:
        v = 1.0 / replicas
        out = np.where((j >= 1) & (j <= k), v * (1.0 - v) ** (j - 1), 0.0)
    out[:, 0] = 1.0 - out[:, 1:].sum(axis=1)
    return out


def sizes_at(table: TurnTable, turn: int) -> Sizes:
    """The history written after ``turn``: normal around its expected value, the variance
    of its turns' growth."""
    variance = table.history_variances()[turn]
    return Sizes.normal(
        np.array([table.history_tokens[turn]]), np.array([variance]), np.array([1.0])
    )


def request_edges_s(table: TurnTable) -> tuple[np.ndarray, np.ndarray]:
    """(before prefill, after decode) seconds of each turn's request."""
    before = sum(table.stage_s(stage) for stage in _BEFORE_PREFILL)
    after = table.stage_s(Stage.POST) + table.stage_s(Stage.DOWNLOAD)
    return np.asarray(before), np.asarray(after)


def missing_tokens(table: TurnTable, setting: KvSetting, memory: Memory, fleet: bool) -> np.ndarray:
    """Each turn's expected history its replica no longer holds (given it is reached)."""
    turns = table.reach.size
    visits = revisits(setting.routing, setting.replicas, turns, fleet)
    before, after = request_edges_s(table)
    tool_mean_s = float(table.tool_s.mean)
    tool_variance = float(table.tool_s.variance)
    nodes, weights = table.tool_s.quadrature(WINDOW_NODES)
    turn_s = table.request_s + tool_mean_s
    held = np.zeros(turns)
    sizes = [sizes_at(table, turn) for turn in range(turns)]
    from scipy import special  # the standard normal's CDF, imported where used (start-up)

    for k in range(1, turns):
        for j in np.flatnonzero(visits[k, 1:] > 0) + 1:
            written = k - j
            fixed_s = after[written] + before[k] + float(turn_s[written + 1 : k].sum())
            own = sizes[written]
            if j == 1:
                within = memory.kept(own, fixed_s + nodes) @ (own.tokens * own.probability)
                alive = (fixed_s + nodes) <= setting.ttl_s
                kept = float(weights @ (within * alive))
            else:
                window = fixed_s + j * tool_mean_s
                spread = np.sqrt(j * tool_variance)
                alive = (
                    special.ndtr((setting.ttl_s - window) / spread)
                    if spread > 0
                    else float(window <= setting.ttl_s)
                )
                kept = float(memory.kept(own, window)[0] @ (own.tokens * own.probability)) * alive
            held[k] += visits[k, j] * kept
    return np.maximum(table.prior_tokens - held, 0.0) * (np.arange(turns) > 0)


def visit_share(setting: KvSetting, fleet: bool) -> float:
    """P(one turn of a session writes to a given replica it is not bound to), for the entries
    a session leaves behind: 1/R when the session's turns spread over the replicas."""
    same = setting.routing in _SAME_REPLICA or (
        setting.routing is Routing.LEAST_LOADED and not fleet
    )
    return 1.0 if same or setting.replicas == 1 else 1.0 / setting.replicas


def left_behind(table: TurnTable, visit: float) -> Sizes:
    """The entries one rollout leaves on a replica it visits with probability ``visit`` per
    turn: turn i's history when turn i is its last visit there, with probability
    v sum_(m >= i) P(n = m) (1 - v)^(m - i) (the atoms' probabilities add up to the
    expected number of entries, at most one)."""
    ended = table.reach * table.last
    turns = table.reach.size
    i, m = np.arange(turns)[:, None], np.arange(turns)[None, :]
    later = np.where(m >= i, (1.0 - visit) ** np.maximum(m - i, 0), 0.0)
    weights = visit * later @ ended
    return Sizes.normal(table.history_tokens, table.history_variances(), weights)


def single_agent_missing(
    columns: Any, point: int, transport: Transport, table: TurnTable
) -> np.ndarray:
    """One agent's turns: its memory holds only its own entries, so under LRU a history
    survives while it fits (an entry used after it is its own, older ones are its
    earlier rollouts'), and under ttl-pin the entries its earlier rollouts left within
    their time-to-live may leave no room."""
    setting = KvSetting.of_point(columns, point, transport)
    grid = TokenGrid(setting.capacity_tokens)
    if not setting.pinned:
        nothing = Sizes(np.zeros(1), np.ones(1))
        alone = Neighbours(
            others=generating(np.array([1.0])),
            in_use=nothing,
            written=nothing,
            touches=lambda windows_s: (np.zeros_like(windows_s), np.zeros_like(windows_s)),
            ends_per_s=0.0,
            ended=nothing,
        )
        return missing_tokens(table, setting, Memory.lru(grid, alone), fleet=False)
    cycle_s = float(table.reach @ (table.request_s + table.stage_s(Stage.TOOL)))
    if columns.connection.reuse_across_rollouts[point, 0] > 0:
        cycle_s += float(
            columns.load.think_time_s.values[columns.load.think_time_s.index[point]].mean
        )
    share = 1.0 / setting.replicas if setting.routing is Routing.CONSISTENT_HASH else 1.0
    left = left_behind(table, visit_share(setting, fleet=False))
    held = min(setting.ttl_s, _INFINITE_S) * share / cycle_s
    offered = Sizes(left.tokens, left.probability * held)
    return missing_tokens(table, setting, Memory.pinned(grid, offered), fleet=False)


_INFINITE_S = 1e9
