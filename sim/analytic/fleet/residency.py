"""The fleet's KV residency: what the other sessions on a replica leave of a session's history.

A session's turns find their history as one agent's do
(``sim.analytic.agent.prefix_survival``), on replicas that also serve the
rest of the fleet.  From the load (agents and think time, or an arrival rate)
and the rollout's expected turns come: the live sessions (a closed
population's M ~ Binomial(N, e2e / cycle), open arrivals' Poisson(rate x
e2e)), how many of them write to the tagged session's replica (affinity binds
each new connection to the replica with the fewest, so they are spread
evenly; a hash spreads them binomially; the other policies send every turn
anywhere, 1/R to each replica), the size of a live session's entry at a
random moment (turn k weighted by its share of the rollout's time) and of the
one it holds in use (the history turn k took, weighted by its prefill and
decode), the rollouts ending per replica and the history they leave.  LRU then evicts by
stack distance and ttl-pin is a loss system (``replica_memory``).  The load
depends on the hit rate (a miss prefills the history again, which lengthens
every turn), so the two are solved together: a fixed point on the rollout's
end-to-end time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from models.kv_cache import Routing
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect
from sim.analytic.agent.prefix_survival import (
    KvSetting,
    Memory,
    left_behind,
    missing_tokens,
    visit_share,
)
from sim.analytic.agent.replica_memory import Neighbours, generating
from sim.analytic.agent.token_grid import Sizes, TokenGrid
from sim.analytic.agent.turn_table import TurnTable
from sim.turn.transports import Transport

FIXED_POINT_STEPS = 8
_SAME_REPLICA = (Routing.AFFINITY, Routing.CONSISTENT_HASH)


@dataclass(frozen=True)
class Contention:
    """What the queueing network says of a load point: its throughput and each turn's
    waits for the pools (they lengthen the gaps an entry must outlive)."""

    rollouts_per_s: float
    wait_s_per_turn: float
    decode_stretch: float = 1.0
    """Decode time over its lone-stream time (the batch a stream joins)."""


def fleet_missing(
    scenario: Scenario,
    transport: Transport,
    table: TurnTable,
    contention: Contention | None = None,
) -> np.ndarray:
    """Each turn's expected history its replica no longer holds in ``scenario``'s fleet, at
    the load's throughput without contention or at ``contention``'s."""
    setting = KvSetting.of_point(column_form([scenario]), 0, transport)
    grid = TokenGrid(setting.capacity_tokens)
    rate, waits_s = None, 0.0
    if contention is not None:
        rate, waits_s = contention.rollouts_per_s, contention.wait_s_per_turn
        quantities = table.quantities.copy()
        quantities[:, STAGE_COLUMN[Stage.QUEUE]] += waits_s
        quantities[:, STAGE_COLUMN[Stage.DECODE]] *= contention.decode_stretch
        table = replace(table, quantities=quantities)
    e2e_s = float(table.reach @ (table.request_s + table.stage_s(Stage.TOOL)))
    missing = np.zeros_like(table.reach)
    for _ in range(FIXED_POINT_STEPS):
        load = _Load(scenario, e2e_s, rate)
        held = 1.0 - missing / np.maximum(table.prior_tokens, 1e-300)
        held[0] = 1.0
        memory = _memory(setting, grid, table, load, held)
        missing = missing_tokens(table, setting, memory, fleet=True)
        expected = expect(scenario, transport, missing)
        stretch = 0.0 if contention is None else contention.decode_stretch - 1.0
        stretch_s = float(expected.stage_s[STAGE_COLUMN[Stage.DECODE]]) * stretch
        updated = expected.e2e_s + waits_s * table.turns + stretch_s
        if abs(updated - e2e_s) <= 1e-6 * e2e_s:
            break
        e2e_s = updated
    return missing


class _Load:
    """Live sessions and rollouts per second at a given end-to-end time."""

    def __init__(self, scenario: Scenario, e2e_s: float, rollouts_per_s: float | None) -> None:
        from scipy.stats import binom, poisson  # imported where used (start-up)

        load = scenario.load
        self.live: Any
        """The number of live sessions (a frozen scipy distribution)."""
        if load.kind == "closed":
            cycle_s = e2e_s + load.think_time_s.mean
            rate = load.agents / cycle_s if rollouts_per_s is None else rollouts_per_s
            self.live_share = min(1.0, rate * e2e_s / load.agents)
            self.live = binom(load.agents, self.live_share)
            self.agents: int | None = load.agents
        else:
            rate = load.rollouts_per_s if rollouts_per_s is None else rollouts_per_s
            self.live = poisson(rate * e2e_s)
            self.agents = None
        self.rollouts_per_s = rate
        self.e2e_s = e2e_s


def _memory(
    setting: KvSetting, grid: TokenGrid, table: TurnTable, load: _Load, held: np.ndarray
) -> Memory:
    replicas = setting.replicas
    visit = visit_share(setting, fleet=True)
    bound = setting.routing in _SAME_REPLICA or replicas == 1
    share = 1.0 / replicas
    if setting.pinned:
        return Memory.pinned(grid, _pinned_offered(setting, table, load, bound))
    others, mean_others = _others(setting.routing, replicas, load)
    neighbours = Neighbours(
        others=others,
        in_use=_in_use_sizes(table, held),
        written=_live_sizes(table),
        touches=_touches(table, visit, visit * mean_others),
        ends_per_s=load.rollouts_per_s * share,
        ended=left_behind(table, 1.0),
    )
    return Memory.lru(grid, neighbours)


def _others(routing: Routing, replicas: int, load: _Load) -> tuple[Any, float]:
    """The generating function of the number of other live sessions writing to the tagged
    session's replica, and their mean.  Seen from a live session, the other live sessions
    of a closed population are Binomial(N - 1, p) and of open arrivals Poisson (the
    size-biased count less itself)."""
    if routing is Routing.AFFINITY:
        return _balanced(replicas, load)
    share = 1.0 / replicas if routing is Routing.CONSISTENT_HASH else 1.0
    if load.agents is None:
        mean = float(load.live.mean()) * share
        return (lambda z: np.exp(mean * (z - 1.0))), mean
    n, p = load.agents - 1, load.live_share * share
    return (lambda z: np.exp(n * np.log(1.0 - p + p * z))), n * p


def _balanced(replicas: int, load: _Load) -> tuple[Any, float]:
    """Affinity binds each new connection to the replica with the fewest: M live sessions
    over R replicas hold floor(M / R) each and M mod R of them one more, the tagged session
    on one of those with probability proportional to the sessions there."""
    live = np.arange(int(load.live.ppf(1 - 1e-9)) + 2)
    tagged = live * load.live.pmf(live)
    tagged = tagged / tagged.sum()
    low = live // replicas
    extra = live - low * replicas
    on_high = extra * (low + 1) / np.maximum(live, 1)
    size = int(low.max()) + 2
    count = np.bincount(np.maximum(low - 1, 0), tagged * (1 - on_high), minlength=size)
    count += np.bincount(low, tagged * on_high, minlength=size)
    return generating(count), float(count @ np.arange(count.size))


def _time_weights(table: TurnTable) -> np.ndarray:
    period = table.request_s + table.stage_s(Stage.TOOL)
    weights = table.reach * period
    return weights / weights.sum()


def _live_sizes(table: TurnTable) -> Sizes:
    """A live session's entry at a random moment: the history of the turn it is in."""
    return Sizes.normal(table.history_tokens, table.history_variances(), _time_weights(table))


def _in_use_sizes(table: TurnTable, held: np.ndarray) -> Sizes:
    """The entry a session holds in use: the history its turn took at its prefill (the
    history before the turn; the first turn takes none), when that turn found it (``held``,
    the share of its history each turn finds).  A session in use is in turn k for the
    share of the in-use time turn k takes, its prefill and decode."""
    busy_s = table.reach * (table.stage_s(Stage.PREFILL) + table.stage_s(Stage.DECODE))
    found = busy_s * held / busy_s.sum()
    found[0] = 0.0
    return Sizes.normal(table.prior_tokens, table.prior_variances(), found)


def _touches(table: TurnTable, visit: float, writers: float) -> Any:
    """For a window of W seconds: P(an other session holds its entry in use on the replica
    at LRU's last check) and P(it wrote there since the window began and is not in use).
    LRU checks at writes; the last comes about a cycle over (writers + 1) before the
    window's end, ``writers`` the mean number of other sessions writing to the replica."""
    weights = _time_weights(table)
    cycle_s = float(weights @ (table.request_s + table.stage_s(Stage.TOOL)))
    request_s = float(weights @ table.request_s)
    busy_s = float(weights @ (table.stage_s(Stage.PREFILL) + table.stage_s(Stage.DECODE)))
    in_use = visit * busy_s / cycle_s
    tool = table.tool_s
    lag_s = cycle_s / max(writers, 1.0)

    def touches(windows_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counted_s = np.maximum(np.asarray(windows_s) - lag_s, 0.0)
        idle = np.clip(np.asarray(tool.partial_expectation(counted_s - request_s)) / cycle_s, 0, 1)
        elsewhere = idle + (1.0 - idle) * (1.0 - visit) ** np.maximum(1.0, counted_s / cycle_s)
        return np.full_like(counted_s, in_use), (1.0 - in_use) * (1.0 - elsewhere)

    return touches


def _pinned_offered(setting: KvSetting, table: TurnTable, load: _Load, bound: bool) -> Sizes:
    """Erlangs of each entry size pinned on one replica by the other sessions: each write
    held until its session writes there again, or its time-to-live."""
    replicas = setting.replicas
    period = table.request_s + table.stage_s(Stage.TOOL)
    writes = load.rollouts_per_s * table.reach / replicas
    turns = table.reach.size
    ttl_s = setting.ttl_s
    if bound:
        following = np.append(period[1:], 0.0)
        mean_live = load.rollouts_per_s * load.e2e_s / replicas
        alone = 1.0 / max(mean_live, 1.0)
        live_part = (1.0 - table.last) * np.minimum(following, ttl_s) * (1.0 - alone)
        hold = live_part + table.last * ttl_s
    else:
        v = 1.0 / replicas
        mean_period = float(_time_weights(table) @ period)
        hold = np.empty(turns)
        ended = table.reach * table.last
        for k in range(turns):
            remaining = np.arange(turns - k)
            going = ended[k:] / max(table.reach[k], 1e-300)
            back = np.array(
                [
                    sum(
                        v * (1 - v) ** (j - 1) * min(j * mean_period, ttl_s)
                        for j in range(1, m + 1)
                    )
                    + (1 - v) ** m * ttl_s
                    for m in remaining
                ]
            )
            hold[k] = float(going @ back)
    return Sizes.normal(table.history_tokens, table.history_variances(), writes * hold)
