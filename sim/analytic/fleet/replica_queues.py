"""Inference replicas that queue on their own: what routing costs in waiting.

With KV residency the router picks a replica first and the request waits for
that replica's stream slots (``sim.des.engine``), so the fleet's inference pool
is R queues of s slots, not one of R x s.  A replica is a birth-death chain on
the requests it holds, j: in service min(j, s), each at the batching curve's
pace (a visit of prefill P and lone-stream decode D takes P + D (1 + k (b - 1))
with b streams), so a hot replica also decodes slower.  By policy:

- ``least-loaded`` sends each request to the replica with the fewest requests in
  service or waiting: about one pool of R x s slots (the network's station);
- ``random`` and ``round-robin`` spread requests evenly and blindly: each
  replica takes 1/R of the visits as a Poisson stream; round-robin's even
  spacing makes a replica's arrivals every R-th of them (squared coefficient of
  variation 1/R), so its wait is random's times (1/R + 1) / 2, the
  Allen-Cunneen ratio at exponential service (measured against the DES on 4
  replicas at their saturation: 157 ms per turn against the DES's 156);
- ``affinity`` and ``consistent-hash`` bind sessions to replicas: each replica
  is a closed queue of the n sessions bound to it (the machine-repair model),
  each thinking for the rest of its cycle; affinity spreads the live sessions
  evenly (floor or ceil of M / R), a hash binomially, so some replicas run hot.

A visit's time at inference is the mean over replicas weighted by their visits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.kv_cache import Routing

_BOUND = (Routing.AFFINITY, Routing.CONSISTENT_HASH)
_FIXED_POINT_STEPS = 60
_OPEN_STATES = 4096


def pooled(routing: Routing) -> bool:
    """The policy's replicas behave as one pool (least-loaded)."""
    return routing is Routing.LEAST_LOADED


@dataclass(frozen=True)
class Replica:
    """One replica's slots and the visits it serves."""

    slots: int
    prefill_s: float
    """Per visit: prefill (and the classifiers' overrun), which batching does not slow."""
    decode_s: float
    """Per visit: decode at the lone-stream rate."""
    slowdown_per_stream: float

    def service_s(self, streams: np.ndarray) -> np.ndarray:
        return self.prefill_s + self.decode_s * (1.0 + self.slowdown_per_stream * (streams - 1))

    def closed(self, sessions: int, think_s: float) -> tuple[float, float]:
        """(time per visit at the replica, of which waiting) with ``sessions`` bound to it."""
        if sessions <= 0:
            return 0.0, 0.0
        j = np.arange(sessions + 1)
        serving = np.minimum(j, self.slots)
        up = (sessions - j[:-1]) / think_s
        down = serving[1:] / self.service_s(np.maximum(serving[1:], 1))
        return self._moments(j, serving, np.log(up) - np.log(down), (sessions - j) / think_s)

    def open(self, visits_per_s: float) -> tuple[float, float]:
        """(time per visit at the replica, of which waiting) for Poisson visits."""
        top = self.slots / float(self.service_s(np.array(self.slots)))
        if visits_per_s >= top:
            return float("inf"), float("inf")
        j = np.arange(_OPEN_STATES)
        serving = np.minimum(j, self.slots)
        down = serving[1:] / self.service_s(np.maximum(serving[1:], 1))
        arrivals = np.full(j.size, visits_per_s)
        return self._moments(j, serving, np.log(visits_per_s) - np.log(down), arrivals)

    @staticmethod
    def _moments(
        j: np.ndarray, serving: np.ndarray, log_ratio: np.ndarray, arrivals: np.ndarray
    ) -> tuple[float, float]:
        log_p = np.concatenate([[0.0], np.cumsum(log_ratio)])
        p = np.exp(log_p - log_p.max())
        p /= p.sum()
        rate = float(p @ arrivals)
        if rate <= 0:
            return 0.0, 0.0
        return float(p @ j) / rate, float(p @ (j - serving)) / rate


def visit_s(
    routing: Routing,
    replicas: int,
    replica: Replica,
    visits_per_s: float,
    think_s: float,
    live: float,
    turns: float,
) -> tuple[float, float]:
    """(time per visit at inference, of which waiting) of a fleet with ``live`` sessions
    in a rollout on average, each thinking ``think_s`` between its ``turns`` visits."""
    if routing not in _BOUND:
        return _spaced(routing, replicas, *replica.open(visits_per_s / replicas))
    if routing is Routing.AFFINITY:
        low, share = divmod(live / replicas, 1.0)
        counts = np.array([int(low), int(low) + 1])
        on_high = share * (low + 1) / max(live / replicas, 1e-300)
        weights = np.array([1.0 - on_high, on_high])
        times = np.array([replica.closed(int(n), think_s) for n in counts])
    else:
        counts, weights, times = _hashed(replicas, replica, visits_per_s, think_s, live, turns)
    mean = weights @ times / weights.sum()
    return float(mean[0]), float(mean[1])


def _hashed(
    replicas: int,
    replica: Replica,
    visits_per_s: float,
    think_s: float,
    live: float,
    turns: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A hash sends each new session to any replica: a replica's sessions arrive at 1/R of
    the rollouts' rate and stay as long as its own queue makes their rollouts, so a hot
    replica keeps more of them.  The count is a birth-death chain (births rate / R, deaths
    n / (turns x (think + time per visit at n))); a visit is weighted by its rate."""
    starts_per_s = visits_per_s / turns / replicas
    most = max(8, int(4 * live / replicas + 8 * np.sqrt(live / replicas + 1)))
    counts = np.arange(1, most + 1)
    times = np.array([replica.closed(int(n), think_s) for n in counts])
    stay_s = turns * (think_s + times[:, 0])
    log_p = np.cumsum(np.log(starts_per_s * stay_s) - np.log(counts))
    p = np.exp(log_p - log_p.max())
    visits = p * counts / (think_s + times[:, 0])
    return counts, visits, times


def queued_cycle_s(
    routing: Routing,
    replicas: int,
    replica: Replica,
    agents: int,
    turns: float,
    rest_s: float,
    think_s: float,
) -> tuple[float, float, float]:
    """A closed population's cycle (think time and rollout), time at inference per visit and
    the wait in it, when each replica queues on its own; ``rest_s`` is the cycle without
    inference.  A fixed point on the throughput."""
    if routing not in _BOUND:
        away_s = max(rest_s / turns, 1e-12)
        at_s, waiting_s = _spaced(
            routing, replicas, *random_closed(replica, replicas, agents, away_s)
        )
        return rest_s + at_s * turns, at_s, waiting_s
    at_s = replica.prefill_s + replica.decode_s
    waiting_s = 0.0
    for _ in range(_FIXED_POINT_STEPS):
        cycle_s = rest_s + at_s * turns
        rate = agents / cycle_s
        live = agents * max(0.0, cycle_s - think_s) / cycle_s
        think_visit_s = max((rest_s - think_s) / turns, 1e-12)
        updated, waiting_s = visit_s(
            routing, replicas, replica, rate * turns, think_visit_s, live, turns
        )
        if not np.isfinite(updated):
            updated = 2.0 * at_s
        if abs(updated - at_s) <= 1e-7 * at_s:
            break
        at_s = 0.5 * (at_s + updated)
    return rest_s + at_s * turns, at_s, waiting_s


def _spaced(routing: Routing, replicas: int, at_s: float, waiting_s: float) -> tuple[float, float]:
    """(time per visit, of which waiting) of random routing, or of round-robin's evenly
    spaced arrivals: the wait times (1/R + 1) / 2 (Allen-Cunneen, exponential service)."""
    if routing is not Routing.ROUND_ROBIN:
        return at_s, waiting_s
    spaced_s = waiting_s * (1.0 / replicas + 1.0) / 2.0
    return at_s - waiting_s + spaced_s, spaced_s


def random_closed(
    replica: Replica, replicas: int, agents: int, away_s: float
) -> tuple[float, float]:
    """(time per visit at inference, of which waiting) of a closed population whose visits
    go to a random replica and spend ``away_s`` elsewhere between two, by the product form:
    P(n_0 away, n_r at replica r) ~ away^n_0 / n_0! prod_r R^-n_r / prod_(j <= n_r) mu(j),
    mu(j) = min(j, s) / service(min(j, s)), summed by convolution in logs."""
    j = np.arange(1, agents + 1)
    serving = np.minimum(j, replica.slots)
    log_mu = np.log(serving) - np.log(replica.service_s(serving))
    log_f = np.concatenate([[0.0], np.cumsum(-np.log(replicas) - log_mu)])
    others = log_f
    for _ in range(replicas - 2):
        others = _log_convolve(others, log_f)
    log_all = _log_convolve(others, log_f) if replicas > 1 else log_f
    others = others if replicas > 1 else np.concatenate([[0.0], np.full(agents, -np.inf)])
    m = np.arange(agents + 1)
    log_away = m * np.log(away_s) - np.cumsum(np.log(np.maximum(m, 1)))
    log_g = np.logaddexp.reduce(log_all + log_away[::-1])
    log_g_less = np.logaddexp.reduce(log_all[:-1] + log_away[:-1][::-1])
    visits_per_s = float(np.exp(log_g_less - log_g))
    at_inference = float(
        np.exp(
            np.logaddexp.reduce(np.log(np.maximum(m, 1e-300)) + log_all + log_away[::-1]) - log_g
        )
    )
    rest = _log_convolve(others, log_away[None, :].ravel())
    k = np.arange(agents + 1)
    marginal = np.exp(log_f + rest[::-1] - log_g)
    queued = float(marginal @ (k - np.minimum(k, replica.slots)))
    return at_inference / visits_per_s, queued * replicas / visits_per_s


def _log_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log of the convolution of exp(a) and exp(b), truncated to a's length."""
    n = a.size
    index = np.arange(n)[:, None] - np.arange(n)[None, :]
    terms = np.where(index >= 0, a[None, :] + b[np.clip(index, 0, n - 1)], -np.inf)
    return np.logaddexp.reduce(terms, axis=1)
