"""The client's retry policy: how many attempts fail and how long it waits between them.

An attempt fails with probability p, independently, so a request's failed
attempts F are geometric: P(F >= j) = p^j, E[F] = p / (1 - p).  The openai SDK
retries a failed call ``max_retries`` times, sleeping
``min(initial * 2^r, cap) * (1 - jitter * U)`` before retry r (U uniform on
[0, 1)); after the last retry fails the agent loop sends the request again at
once, as a new SDK call whose retries count from 0 again (an assumption: Codex
and other agents retry stream errors themselves).  So failure j of a turn
(j = 0, 1, ...) is followed by the wait of retry ``j mod (max_retries + 1)``,
none when that is ``max_retries``.
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


def wait_after_failure_s(policy: Retries, failure: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """The wait after failure ``failure`` (0-based, counted over the whole turn); the policy
    may be a column form (numbers as arrays over points)."""
    position = np.asarray(failure) % (policy.max_retries + 1)
    return np.where(position < policy.max_retries, backoff_s(policy, position, uniform), 0.0)


def expected_failed_attempts(error_rate: np.ndarray) -> np.ndarray:
    """E[F] = p / (1 - p): a geometric number of failures before the attempt that succeeds."""
    return error_rate / (1.0 - error_rate)


def expected_retry_wait_s(policy: Retries, error_rate: np.ndarray) -> np.ndarray:
    """E[sum of waits] = sum_j p^(j+1) E[wait after failure j], summed over SDK calls:

    the waits of one call repeat every ``max_retries + 1`` failures, each cycle
    reached with probability p^(max_retries + 1), a geometric series.
    """
    p = np.asarray(error_rate, dtype=float)
    retries = np.asarray(policy.max_retries, dtype=float)
    mean_jitter = 1.0 - policy.retry_jitter_fraction / 2.0
    one_call = np.zeros(np.broadcast_shapes(p.shape, retries.shape))
    for retry in range(int(np.max(retries))):
        mean_wait = backoff_s(policy, np.array(retry), np.array(0.0)) * mean_jitter
        one_call = one_call + np.where(retry < retries, p ** (retry + 1) * mean_wait, 0.0)
    return one_call / (1.0 - p ** (retries + 1))
