"""Server errors and retries: geometric attempts, the SDK's backoff, the retry stage in the
budget and the trace, and the DES against the analytic engine."""

from __future__ import annotations

import numpy as np
import pytest
from support import scenario

from models.retry_policy import (
    backoff_s,
    expected_failed_attempts,
    expected_http_wait_s,
    http_waits_s,
)
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.turn.transports import Transport

ERRORS = "retries.server_error_prob=0.2"


def test_the_presets_follow_the_sdks_constants() -> None:
    constants = pytest.importorskip("openai._constants")
    r = scenario("codex-spark").retries
    assert r.max_retries == constants.DEFAULT_MAX_RETRIES
    assert r.initial_retry_delay_s == constants.INITIAL_RETRY_DELAY
    assert r.max_retry_delay_s == constants.MAX_RETRY_DELAY


def test_backoff_doubles_from_half_a_second_up_to_eight_less_a_jitter_of_up_to_a_quarter() -> None:
    """min(0.5 * 2^r, 8) * (1 - 0.25 u), as openai's _calculate_retry_timeout computes it."""
    r = scenario("codex-spark").retries
    retry = np.arange(7)
    assert backoff_s(r, retry, np.zeros(7)).tolist() == [0.5, 1, 2, 4, 8, 8, 8]
    assert backoff_s(r, retry, np.ones(7)).tolist() == [0.375, 0.75, 1.5, 3, 6, 6, 6]


def test_after_the_sdks_last_retry_the_agent_sends_again_at_once() -> None:
    """Two retries per SDK call: early failures wait 0.5, 1, then none (the SDK gave up and
    the agent sends a new call), then the next call's 0.5, 1..."""
    r = scenario("codex-spark").retries
    waits = http_waits_s(r, np.ones(6, dtype=bool), np.zeros(6), np.zeros(6))
    assert waits.tolist() == [0.5, 1.0, 0.0, 0.5, 1.0, 0.0]


def test_an_error_in_the_stream_is_not_retried_by_the_sdk_and_starts_a_new_call() -> None:
    """A late failure (after prefill, in the stream) waits nothing and the next early one
    is the first retry of a new call; a new turn is a new call too."""
    r = scenario("codex-spark").retries
    early = np.array([True, False, True, True, True, True])
    turn = np.array([0, 0, 0, 0, 1, 1])
    waits = http_waits_s(r, early, turn, np.zeros(6))
    assert waits.tolist() == [0.5, 0.0, 0.5, 1.0, 0.5, 1.0]


def _forward_expected_wait(p: float, early_share: float, retries: int, means: list[float]) -> float:
    """E[waits] by following the SDK call's retry count forward, failure after failure."""
    at = np.zeros(retries + 1)
    at[0] = 1.0
    total = 0.0
    for _ in range(400):
        at = at * p
        total += early_share * float(at[:retries] @ means)
        moved = np.zeros_like(at)
        moved[1:] = early_share * at[:-1]
        moved[0] = (1 - early_share) * at.sum() + early_share * at[-1]
        at = moved
    return total


@pytest.mark.parametrize("early_share", [1.0, 0.5, 0.0])
def test_the_expected_http_wait_is_the_chain_over_the_retry_count(early_share: float) -> None:
    r = scenario("codex-spark", f"retries.early_error_fraction={early_share}").retries
    means = [0.5 * 0.875, 1.0 * 0.875]
    expected = _forward_expected_wait(0.3, early_share, 2, means)
    assert float(expected_http_wait_s(r, np.array(0.3))) == pytest.approx(expected, rel=1e-12)


def test_drawn_attempts_per_request_are_geometric() -> None:
    """E[attempts] = 1 / (1 - p); E[waits] = sum_j p^(j+1) E[wait after failure j]."""
    s = scenario("codex-spark", ERRORS)
    turns = draw_turns(s, 0, 1024)
    failures = turns.failed_early + turns.failed_late
    attempts = 1 + failures
    assert abs(attempts.mean() - 1 / (1 - 0.2)) < 4 * attempts.std() / np.sqrt(attempts.size)
    assert expected_failed_attempts(np.array(0.2)) == pytest.approx(0.25)
    waits = turns.retry_wait_s
    expected = expected_http_wait_s(s.retries, np.array(0.2))
    assert abs(waits.mean() - expected) < 4 * waits.std() / np.sqrt(waits.size)
    early_share = turns.failed_early.sum() / failures.sum()
    assert abs(early_share - s.retries.early_error_fraction) < 0.02


def test_the_expected_wait_sums_the_series() -> None:
    """p = 0.5, every failure early: one call waits 0.5 p + 1 p^2 (times the mean jitter
    0.875), cycles p^3."""
    r = scenario("codex-spark", "retries.early_error_fraction=1").retries
    one_call = (0.5 * 0.5 + 1.0 * 0.25) * 0.875
    assert float(expected_http_wait_s(r, np.array(0.5))) == pytest.approx(one_call / (1 - 0.125))


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_failed_attempts_are_their_own_stage_and_agree_with_the_analytic_engine(
    transport: Transport,
) -> None:
    s = scenario("codex-spark", ERRORS)
    records = simulate(s, transport, 1024, keep_turns=True)
    retry = records.stage_s[:, STAGE_COLUMN[Stage.RETRY]]
    expected = expect(s, transport).stage_s[STAGE_COLUMN[Stage.RETRY]]
    assert abs(retry.mean() - expected) < 3 * retry.std() / np.sqrt(retry.size)
    rows = records.turn_records
    assert rows is not None
    assert np.any(rows.stage_s[:, STAGE_COLUMN[Stage.RETRY]] > 0)
    np.testing.assert_allclose(records.stage_s.sum(axis=1), records.e2e_s, rtol=1e-9)


def _without_backoff(s: Scenario) -> Scenario:
    retries = s.retries.model_copy(update={"initial_retry_delay_s": 0.0, "max_retry_delay_s": 0.0})
    return s.model_copy(update={"retries": retries})


def test_over_websocket_a_failed_response_is_sent_again_without_a_wait() -> None:
    """The SDK's backoff is HTTP's alone: without it WebSocket's retry stage is unchanged,
    HTTP's loses exactly the expected waits of every turn."""
    s = scenario("codex-spark", ERRORS, "retries.early_error_fraction=1")
    retry = STAGE_COLUMN[Stage.RETRY]
    ws, ws_no_wait = expect(s, Transport.WS), expect(_without_backoff(s), Transport.WS)
    assert ws.stage_s[retry] == ws_no_wait.stage_s[retry]
    http, http_no_wait = expect(s, Transport.HTTP), expect(_without_backoff(s), Transport.HTTP)
    per_turn_s = float(expected_http_wait_s(s.retries, np.array(0.2)))
    assert http.stage_s[retry] - http_no_wait.stage_s[retry] == pytest.approx(
        per_turn_s * http.turns, rel=1e-9
    )


def test_without_errors_there_is_no_retry_stage() -> None:
    records = simulate(scenario("codex-spark"), Transport.HTTP, 64)
    assert np.all(records.stage_s[:, STAGE_COLUMN[Stage.RETRY]] == 0)
