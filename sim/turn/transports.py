"""Transports as flows: the scope of work each asks for, per turn.

Each transport gives two variants of every turn: ``cold`` (a new connection:
turn 0, an expired keep-alive, a rotated or dropped WebSocket, so no
connection cache) and ``warm`` (a live connection).  The engine decides which
one a turn is; the analytic engine mixes them by probability.

The scenario's switches (``api.config_cache``, ``connection.store``) enter as
0/1 numbers, never as branches, so the same code serves one scenario and a
column form of many whose switches differ point by point.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from models.in_place import add_to, multiply_by
from models.scenario import Scenario
from models.work import Work
from sim.turn.compaction import compaction_turns
from sim.turn.turns import Turns


class Transport(StrEnum):
    """How the client talks to the API."""

    HTTP = "http"
    HTTP_FULL = "http-full"
    WS = "ws"
    WS_APPEND = "ws-append"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    @property
    def is_websocket(self) -> bool:
        return self in (Transport.WS, Transport.WS_APPEND)


_DESCRIPTIONS = {
    Transport.HTTP: "per-request HTTP with previous_response_id (server rebuilds state)",
    Transport.HTTP_FULL: "per-request HTTP resending the whole history (no stored state)",
    Transport.WS: "WebSocket mode with the connection-scoped cache",
    Transport.WS_APPEND: "one long-running response per rollout (the minimal-overhead bound)",
}


def turn_work(scenario: Scenario, transport: Transport, turns: Turns) -> tuple[Work, Work]:
    """(cold, warm) work of every turn under ``transport``."""
    warm = warm_turn_work(scenario, transport, turns)
    return cold_turn_work(scenario, transport, turns, warm), warm


def warm_turn_work(scenario: Scenario, transport: Transport, turns: Turns) -> Work:
    """Work of every turn on a live connection."""
    if transport is Transport.HTTP or transport is Transport.HTTP_FULL:
        return _full_rebuild(scenario, turns, resend=float(transport is Transport.HTTP_FULL))
    return _cached(scenario, turns, append=transport is Transport.WS_APPEND)


def cold_turn_work(
    scenario: Scenario, transport: Transport, turns: Turns, warm: Work | None = None
) -> Work:
    """Work of every turn on a new connection (``warm``: the same turns' warm work, when
    known: over HTTP the cold turn is the warm one plus connecting).

    A turn after a compaction starts a new chain on the connection its compaction
    request opened: it connects only where no compaction came first.
    """
    if transport is Transport.HTTP or transport is Transport.HTTP_FULL:
        full = warm if warm is not None else warm_turn_work(scenario, transport, turns)
        return _with(full, connect_http=1.0 - turns.compacted)
    cold = _after_cache_loss(scenario, turns)
    if transport is Transport.WS_APPEND:
        cold = _with(cold, post_runs=turns.is_last)
    return cold


def compaction_work(scenario: Scenario, transport: Transport, turns: Turns) -> tuple[Work, Work]:
    """(cold, warm) work of the compaction requests sent before ``turns``.

    Each is a continuation like any turn over the same transport (over WebSocket
    only its new input is processed when the connection is warm); one long-running
    response (``ws-append``) ends there and its compaction is a WebSocket request.
    """
    requests = compaction_turns(turns, scenario.compaction)
    if transport is Transport.WS_APPEND:
        transport = Transport.WS
    return turn_work(scenario, transport, requests)


def _full_rebuild(scenario: Scenario, turns: Turns, resend: float | np.ndarray) -> Work:
    """An HTTP turn: the server loads, validates, renders and classifies the whole history.

    ``resend`` is 1 where the client resends the whole history (no stored state), else 0.
    """
    ones = np.ones(turns.shape)
    zeros = np.zeros(turns.shape)
    continuing = _continuing(turns)
    hit = turns.render_hit
    prompt_tokens = turns.fixed_tokens + turns.context_tokens
    rendered = hit * turns.new_tokens + (1 - hit) * prompt_tokens
    config_cache = _switch(scenario.api.config_cache)
    stored = 1.0 - resend
    return Work(
        items_new=turns.items_new,
        items_sent=resend * turns.context_items + stored * turns.items_new,
        tokens_sent=turns.fixed_tokens
        + (resend * turns.context_tokens + stored * turns.new_tokens),
        http_request=ones,
        connect_http=zeros,
        connect_ws=zeros,
        recover=zeros,
        validate_runs=ones,
        items_validated=turns.context_items,
        store_loads=stored * continuing,
        store_state_tokens=stored * continuing * turns.prior_tokens,
        memory_loads=zeros,
        tokens_rendered=rendered,
        route_full=(1 - config_cache) * ones,
        route_cached=config_cache * ones,
        hop_runs=ones,
        safety_runs=ones,
        tokens_classified=prompt_tokens,
        prompt_tokens_uncached=_uncached_prompt(
            scenario, turns, stateless=resend + stored * (1 - continuing)
        ),
        prompt_tokens=prompt_tokens,
        output_tokens=turns.output_tokens,
        decode_s_per_token=turns.decode_s_per_token,
        post_runs=ones,
        post_tokens=turns.output_tokens,
        post_blocking=ones,
        tool_overlaps_post=_switch(scenario.client.tool_starts_on_call_item) * ones,
        tool_s=turns.tool_s,
        failed_early=turns.failed_early,
        failed_late=turns.failed_late,
        retry_wait_s=turns.retry_wait_s,
        compactions=turns.compacted,
    )


def _continuing(turns: Turns) -> np.ndarray:
    """1 where the request continues a chain (a previous response to load), else 0."""
    return (turns.turn_index > 0) * (1.0 - turns.compacted)


def _after_cache_loss(scenario: Scenario, turns: Turns) -> Work:
    """A WebSocket turn on a new connection: nothing cached on it yet.

    The SDK retries no failed response over WebSocket, so a failure waits for nothing.

    Turn 0 is ordinary.  Later turns either reload state from storage
    (store=true) or fail with previous_response_not_found and resend everything
    (store=false).  Either way the server rebuilds the whole history once.
    """
    store = _switch(scenario.connection.store)
    base = _full_rebuild(scenario, turns, resend=1.0 - store)
    continuing = _continuing(turns)
    return _with(
        base,
        tokens_rendered=turns.fixed_tokens + turns.context_tokens,
        http_request=0.0,
        connect_ws=1.0 - turns.compacted,
        recover=(1.0 - store) * continuing,
        post_blocking=0.0,
        retry_wait_s=0.0,
    )


def _cached(scenario: Scenario, turns: Turns, append: bool) -> Work:
    """A warm WebSocket turn: only the new input is validated, rendered and classified;
    a failed attempt is sent again at once (the SDK retries nothing over WebSocket).

    After a compaction the new input is the whole compacted context, and one
    long-running response starts again (its pre-inference work runs once more).
    """
    zeros = np.zeros(turns.shape)
    ones = np.ones(turns.shape)
    pre_inference = turns.compacted * ones if append else ones
    return Work(
        items_new=turns.items_new,
        items_sent=turns.items_new,
        tokens_sent=turns.new_tokens if append else turns.fixed_tokens + turns.new_tokens,
        http_request=zeros,
        connect_http=zeros,
        connect_ws=zeros,
        recover=zeros,
        validate_runs=pre_inference,
        items_validated=pre_inference * turns.items_new,
        store_loads=zeros,
        store_state_tokens=zeros,
        memory_loads=pre_inference * (1.0 - turns.compacted),
        tokens_rendered=turns.new_tokens,
        route_full=zeros,
        route_cached=zeros,
        hop_runs=zeros,
        safety_runs=pre_inference,
        tokens_classified=pre_inference * turns.new_tokens,
        prompt_tokens_uncached=_uncached_prompt(scenario, turns, stateless=1 - _continuing(turns)),
        prompt_tokens=add_to(turns.context_tokens, turns.fixed_tokens),
        output_tokens=turns.output_tokens,
        decode_s_per_token=turns.decode_s_per_token,
        post_runs=turns.is_last if append else ones,
        post_tokens=turns.output_tokens,
        post_blocking=zeros,
        tool_overlaps_post=zeros,
        tool_s=turns.tool_s,
        failed_early=turns.failed_early,
        failed_late=turns.failed_late,
        retry_wait_s=zeros,
        compactions=turns.compacted,
    )


def _uncached_prompt(scenario: Scenario, turns: Turns, stateless: np.ndarray) -> np.ndarray:
    """Prompt tokens the accelerator must prefill: the new input, the share of the resident
    prefix that is not reused, and the history the replica no longer holds.

    ``stateless`` is 1 where the request carries no conversation state (a new chain, the
    history resent): where reuse needs that state (``inference.prefix_reuse_needs_state``)
    such a request reuses nothing."""
    i = scenario.inference
    reused = i.prefix_cache_hit_fraction * (1 - _switch(i.prefix_reuse_needs_state) * stateless)
    resident = turns.fixed_tokens + turns.prior_tokens
    # new + (1 - reused) * resident + reused * missing, written over ``resident``
    uncached = add_to(multiply_by(resident, 1 - reused), turns.new_tokens)
    return add_to(uncached, reused * turns.missing_history_tokens)


def cached_prompt_tokens(scenario: Scenario, turns: Turns) -> np.ndarray:
    """Prompt tokens whose KV the replica reuses: the reused share of what it holds (the
    shared prefix, kept hot by every session, and the resident history)."""
    held = turns.fixed_tokens + turns.prior_tokens - turns.missing_history_tokens
    return scenario.inference.prefix_cache_hit_fraction * held


def _switch(value: bool | np.ndarray) -> np.ndarray:
    """A scenario switch as a 0/1 number (or a column of them)."""
    return np.asarray(value, dtype=float)


def _with(work: Work, **changes: np.ndarray | float) -> Work:
    base = {name: getattr(work, name) for name in work.__dataclass_fields__}
    for name, value in changes.items():
        base[name] = np.broadcast_to(np.asarray(value, dtype=float), work.tool_s.shape).copy()
    return Work(**base)
