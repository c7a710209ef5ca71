"""The vectorised single-agent pass against the SimPy DES it stands in for.

Each case runs the same scenario both ways (``simulate`` and ``simulate(...,
reference=True)``) and compares every record, per rollout and per turn, to
1e-12 relative: the connection's cold turns must fall on the same turns and
the clock must add up the same.  The cases reach each rule of the connection:
keep-alive expiry, WebSocket lifetimes and drops (draws from the fault stream
in the order connections open), a session's connection kept across rollouts,
parallel calls, compaction and retried server errors.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from support import scenario

from sim.des import vectorised
from sim.des.runners import simulate
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

ROLLOUTS = 1100
"""Two blocks, the second partial: the pass must respect where a block's streams start."""

CASES = {
    "preset": ("codex-spark",),
    "keep-alive expiry": ("codex-spark", "client.keepalive_idle_s=0.8"),
    "ws lifetime": ("codex-spark", "connection.ws_lifetime_s=15"),
    "ws drops": ("codex-spark", "connection.ws_drops_per_hour=120"),
    "lifetime and drops": (
        "codex-spark",
        "connection.ws_lifetime_s=40",
        "connection.ws_drops_per_hour=60",
    ),
    "session": (
        "codex-spark",
        "connection.reuse_across_rollouts=true",
        "connection.ws_lifetime_s=600",
        "connection.ws_drops_per_hour=6",
    ),
    "parallel calls": ("cursor-agent",),
    "compaction": ("codex-spark", "compaction.threshold_tokens=40000"),
    "retries": ("codex-spark", "retries.server_error_prob=0.05"),
    "store off": ("codex-spark", "connection.store=false", "connection.ws_drops_per_hour=60"),
}


def assert_records_match(fast: RolloutRecords, reference: RolloutRecords) -> None:
    for field in fields(RolloutRecords):
        a, b = getattr(fast, field.name), getattr(reference, field.name)
        if field.name == "turn_records":
            for turn_field in fields(b):
                x = np.asarray(getattr(a, turn_field.name), dtype=float)
                y = np.asarray(getattr(b, turn_field.name), dtype=float)
                np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, err_msg=turn_field.name)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=field.name)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("transport", list(Transport))
def test_vectorised_pass_matches_the_des(case: str, transport: Transport) -> None:
    s = scenario(*CASES[case])
    assert vectorised.applies(s)
    fast = simulate(s, transport, ROLLOUTS, keep_turns=True)
    reference = simulate(s, transport, ROLLOUTS, keep_turns=True, reference=True)
    assert_records_match(fast, reference)


@pytest.mark.parametrize(
    ("case", "transport"),
    [("ws drops", Transport.WS), ("keep-alive expiry", Transport.HTTP), ("session", Transport.WS)],
)
def test_vectorised_pass_matches_a_small_des_run(case: str, transport: Transport) -> None:
    """The fast loop's check: one small block of the connection rules that carry state."""
    s = scenario(*CASES[case])
    fast = simulate(s, transport, 60, keep_turns=True)
    reference = simulate(s, transport, 60, keep_turns=True, reference=True)
    assert_records_match(fast, reference)


def test_cases_reach_each_connection_rule() -> None:
    """The cases are not vacuous: cold turns beyond each rollout's first occur where a
    rule should make them (expiry, lifetime, drops) and not where none applies."""

    def extra_cold(case: str, transport: Transport) -> float:
        r = simulate(scenario(*CASES[case]), transport, 200)
        return float(r.cold_turns.sum() - len(r.cold_turns))

    assert extra_cold("keep-alive expiry", Transport.HTTP) > 50
    assert extra_cold("ws lifetime", Transport.WS) > 50
    assert extra_cold("ws drops", Transport.WS) > 20
    assert extra_cold("session", Transport.WS) < 0
    assert extra_cold("preset", Transport.WS_APPEND) < 5


def test_residency_stays_on_the_event_queue() -> None:
    assert not vectorised.applies(scenario("codex-spark", "kv_cache.residency=true"))
