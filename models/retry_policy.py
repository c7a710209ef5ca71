"""The client's retry policy: how many attempts fail and how long it waits between them.

An attempt fails with probability p, independently, so a request's failed
attempts F are geometric: P(F >= j) = p^j, E[F] = p / (1 - p).  Each failure is
answered before inference (a 502/503 status, probability
``early_error_fraction``) or after prefill (a 500 once the response has started).
What the client does then is what the pinned openai SDK (3.51.0) does, per
transport (``docs/model.md``, section 5, cites its source lines):

- **HTTP** (``responses.create(stream=True)``): the SDK retries a status error
  only while the response has not started (``_base_client.py``: the retry sits
  around ``response.raise_for_status()``, before the stream is handed over), so an
  early failure is retried after ``min(initial * 2^r, cap) * (1 - jitter * U)``
  for the call's retry r = 0, 1, ..., up to ``max_retries``; an error after
  prefill arrives in the stream and is not retried by the SDK.
- **WebSocket mode**: the SDK never retries a failed response (an ``error``
  event is handed to the caller); it only reconnects a dropped socket.

Whenever the SDK does not retry (a late failure, a WebSocket failure, or an
early one after its last retry) the agent loop sends the request again at
once as a new SDK call, whose retries count from 0 again (an assumption: Codex
and other agents retry stream errors themselves).
"""

from __future__ import annotations

import numpy as np

from models.retries import Retries


def backoff_s(policy: Retries, retry: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """The SDK's sleep before retry number ``retry`` (0-based) given its jitter draw."""
    doubled = policy.initial_retry_delay_s * np.power(2.0, np.minimum(retry, 1000))
    return np.minimum(doubled, policy.max_retry_delay_s) * (
        1.0 - policy.retry_jitter_fraction * uniform
    )


def http_waits_s(
    policy: Retries, early: np.ndarray, turn: np.ndarray, uniform: np.ndarray
) -> np.ndarray:
    """The wait after each failure over HTTP, failures in order and ``turn`` (nondecreasing)
    the turn each belongs to: an early one waits the backoff of its SDK call's retry count
    (none after the last retry), a late one none, and a new call starts at each turn and
    after every late failure."""
    early = np.asarray(early, dtype=bool)
    turn = np.asarray(turn)
    index = np.arange(early.size)
    first_of_turn = np.r_[True, turn[1:] != turn[:-1]] if early.size else early
    after_late = np.r_[False, ~early[:-1]] if early.size else early
    call_start = np.maximum.accumulate(np.where(first_of_turn | after_late, index, 0))
    position = (index - call_start) % (policy.max_retries + 1)
    retried = early & (position < policy.max_retries)
    return np.where(retried, backoff_s(policy, position, uniform), 0.0)


def expected_failed_attempts(error_rate: np.ndarray) -> np.ndarray:
    """E[F] = p / (1 - p): a geometric number of failures before the attempt that succeeds."""
    return error_rate / (1.0 - error_rate)


def expected_http_wait_s(policy: Retries, error_rate: np.ndarray) -> np.ndarray:
    """E[sum of waits] of a request over HTTP, by the chain over the SDK call's retry count r.

    With W(r) the expected waits still to come at an attempt of retry count r,
    q = p x early share and b_r the mean backoff, W(max) = p W(0) and
    W(r) = q (b_r + W(r + 1)) + (p - q) W(0) below it; written W(r) = a_r + c_r W(0)
    from the top down, W(0) = a_0 / (1 - c_0).  The policy may be a column form
    (numbers as arrays over points).
    """
    p = np.asarray(error_rate, dtype=float)
    q = p * np.asarray(policy.early_error_fraction, dtype=float)
    retries = np.asarray(policy.max_retries, dtype=float)
    mean_jitter = 1.0 - np.asarray(policy.retry_jitter_fraction, dtype=float) / 2.0
    shape = np.broadcast_shapes(p.shape, q.shape, retries.shape, mean_jitter.shape)
    a, c = np.zeros(shape), np.broadcast_to(p, shape).copy()
    for retry in range(int(np.max(retries)) - 1, -1, -1):
        below = retry < retries
        mean_backoff = backoff_s(policy, np.array(retry), np.array(0.0)) * mean_jitter
        a = np.where(below, q * (mean_backoff + a), a)
        c = np.where(below, q * c + (p - q), c)
    return a / (1.0 - c)
