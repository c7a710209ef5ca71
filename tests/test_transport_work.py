"""How each transport turns a turn into work (``turn_work``), against a table worked by hand.

The project's central claim is that the transports differ in the work a turn asks
of the server, so each cell below was worked out from the protocol's description
(``docs/model/turn.md`` and ``docs/model/transports.md``, and the vendor's description of
WebSocket mode they quote), not from the code: one continuing turn (turn 3 of a rollout,
not its last) with round numbers, under every transport, cold and warm, with and without
``store``.

The turn: 1,000 fixed tokens (instructions and tool definitions), 5,000 tokens of
history, 300 new tokens in 2 new items, 9 items of conversation in all, 200
output tokens, the rendered-token cache missing.  Half of the resident prefix's KV
is reused (``inference.prefix_cache_hit_fraction = 0.5``), so prefill needs the new
300 and half of the 6,000 resident: 3,300.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import scenario

from sim.turn.transports import Transport, turn_work
from sim.turn.turns import Turns

FIXED, PRIOR, NEW, NEW_ITEMS, ITEMS, OUTPUT = 1000.0, 5000.0, 300.0, 2.0, 9.0, 200.0
FULL_PROMPT = FIXED + PRIOR + NEW

HTTP_WARM = {
    "items_sent": NEW_ITEMS,  # previous_response_id: only the new items go up
    "tokens_sent": FIXED + NEW,  # instructions and tools are sent on every request
    "http_request": 1,
    "connect_http": 0,
    "connect_ws": 0,
    "recover": 0,
    "validate_runs": 1,
    "items_validated": ITEMS,  # the server re-validates the whole conversation
    "store_loads": 1,  # the previous response's state is loaded from storage
    "store_state_tokens": PRIOR,
    "memory_loads": 0,
    "tokens_rendered": FULL_PROMPT,  # re-rendered and re-tokenized in full (cache miss)
    "route_full": 0,  # api.config_cache: model resolution cached in memory
    "route_cached": 1,
    "hop_runs": 1,
    "safety_runs": 1,
    "tokens_classified": FULL_PROMPT,  # the classifiers see the whole prompt again
    "prompt_tokens_uncached": NEW + 0.5 * (FIXED + PRIOR),
    "post_runs": 1,
    "post_blocking": 1,  # billing and the like finish before the response completes
}
HTTP_COLD = {**HTTP_WARM, "connect_http": 1}  # an expired keep-alive: a new connection
HTTP_FULL_WARM = {
    **HTTP_WARM,
    "items_sent": ITEMS,  # the client resends everything: no stored state to load
    "tokens_sent": FULL_PROMPT,
    "store_loads": 0,
    "store_state_tokens": 0,
}
HTTP_FULL_COLD = {**HTTP_FULL_WARM, "connect_http": 1}
WS_WARM = {
    "items_sent": NEW_ITEMS,
    "tokens_sent": FIXED + NEW,
    "http_request": 0,
    "connect_http": 0,
    "connect_ws": 0,
    "recover": 0,
    "validate_runs": 1,
    "items_validated": NEW_ITEMS,  # only the new input is validated
    "store_loads": 0,
    "store_state_tokens": 0,
    "memory_loads": 1,  # the previous response's state comes from the connection's cache
    "tokens_rendered": NEW,  # rendered tokens are appended to
    "route_full": 0,  # model resolution and routing reused from the connection
    "route_cached": 0,
    "hop_runs": 0,
    "safety_runs": 1,
    "tokens_classified": NEW,  # classifiers process only the new input
    "prompt_tokens_uncached": NEW + 0.5 * (FIXED + PRIOR),
    "post_runs": 1,
    "post_blocking": 0,  # billing overlaps the next request
}
WS_COLD_STORE = {  # a new connection; state reloaded from storage, the history rebuilt once
    **HTTP_WARM,
    "http_request": 0,
    "connect_ws": 1,
    "post_blocking": 0,
}
WS_COLD_NO_STORE = {  # previous_response_not_found: a new chain resending everything
    **WS_COLD_STORE,
    "items_sent": ITEMS,
    "tokens_sent": FULL_PROMPT,
    "store_loads": 0,
    "store_state_tokens": 0,
    "recover": 1,
}
APPEND_WARM = {  # one long-running response: pre- and post-inference work happen once
    **WS_WARM,
    "tokens_sent": NEW,  # response.append carries only the tool output
    "validate_runs": 0,
    "items_validated": 0,
    "memory_loads": 0,
    "safety_runs": 0,
    "tokens_classified": 0,
    "post_runs": 0,  # not the rollout's last turn
}
APPEND_COLD_STORE = {**WS_COLD_STORE, "post_runs": 0}
APPEND_COLD_NO_STORE = {**WS_COLD_NO_STORE, "post_runs": 0}

CASES = [
    (Transport.HTTP, True, HTTP_COLD, HTTP_WARM),
    (Transport.HTTP, False, HTTP_COLD, HTTP_WARM),
    (Transport.HTTP_FULL, True, HTTP_FULL_COLD, HTTP_FULL_WARM),
    (Transport.WS, True, WS_COLD_STORE, WS_WARM),
    (Transport.WS, False, WS_COLD_NO_STORE, WS_WARM),
    (Transport.WS_APPEND, True, APPEND_COLD_STORE, APPEND_WARM),
    (Transport.WS_APPEND, False, APPEND_COLD_NO_STORE, APPEND_WARM),
]


def one_turn(render_hit: float = 0.0) -> Turns:
    one = np.ones(1)
    zero = np.zeros(1)
    return Turns(
        offsets=np.array([0, 1]),
        turn_index=3 * one,
        is_last=zero,
        fixed_tokens=FIXED,
        new_tokens=NEW * one,
        prior_tokens=PRIOR * one,
        items_new=NEW_ITEMS * one,
        context_items=ITEMS * one,
        output_tokens=OUTPUT * one,
        decode_s_per_token=0.001 * one,
        tool_s=2.5 * one,
        render_hit=render_hit * one,
        missing_history_tokens=zero,
        failed_early=zero,
        failed_late=zero,
        retry_wait_s=zero,
        compacted=zero,
        compaction_prior_tokens=zero,
        compaction_new_tokens=zero,
        compaction_context_items=zero,
        compaction_items_new=zero,
    )


def work_of(transport: Transport, store: bool, render_hit: float = 0.0) -> tuple[dict, dict]:
    changes = ("inference.prefix_cache_hit_fraction=0.5", f"connection.store={str(store).lower()}")
    s = scenario("codex-spark", "api.config_cache=true", *changes)
    cold, warm = turn_work(s, transport, one_turn(render_hit))
    return (
        {name: float(getattr(cold, name)[0]) for name in HTTP_WARM},
        {name: float(getattr(warm, name)[0]) for name in HTTP_WARM},
    )


@pytest.mark.parametrize(
    ("transport", "store", "cold", "warm"),
    CASES,
    ids=[f"{t.value}-{'store' if s else 'no-store'}" for t, s, _, _ in CASES],
)
def test_a_turn_becomes_the_work_worked_out_by_hand(
    transport: Transport, store: bool, cold: dict, warm: dict
) -> None:
    got_cold, got_warm = work_of(transport, store)
    assert got_warm == {name: float(value) for name, value in warm.items()}
    assert got_cold == {name: float(value) for name, value in cold.items()}


def test_work_that_passes_through_is_the_turn_own() -> None:
    """Output, decode speed, tool time and the retries are the turn's, whatever the transport."""
    for transport in Transport:
        for work in turn_work(scenario("codex-spark"), transport, one_turn()):
            assert float(work.output_tokens[0]) == OUTPUT
            assert float(work.post_tokens[0]) == OUTPUT
            assert float(work.decode_s_per_token[0]) == 0.001
            assert float(work.tool_s[0]) == 2.5
            assert float(work.items_new[0]) == NEW_ITEMS


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.HTTP_FULL])
def test_a_rendered_token_cache_hit_renders_only_the_new_input_over_http(
    transport: Transport,
) -> None:
    cold, warm = work_of(transport, True, render_hit=1.0)
    assert warm["tokens_rendered"] == cold["tokens_rendered"] == NEW
    assert warm["tokens_classified"] == FULL_PROMPT, "classifiers still see the whole prompt"


def test_a_new_websocket_renders_the_whole_history_even_on_a_render_cache_hit() -> None:
    cold, warm = work_of(Transport.WS, True, render_hit=1.0)
    assert cold["tokens_rendered"] == FULL_PROMPT
    assert warm["tokens_rendered"] == NEW
