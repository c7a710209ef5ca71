"""One agent alone at its organization's token bucket: a Markov chain on the bucket's level.

A bucket of rate r holding B units (``sim.des.rate_limit``) is followed as its
debt in seconds, V = (B - level) / r: it falls by one a second down to 0 (the
bucket full: refill while the agent is away is not banked beyond B) and rises
by c / r when a request costing c is admitted.  A request is admitted when
V <= tau = (B - 1) / r (the bucket holds a unit).  Otherwise the gateway tells
the wait to that moment, rounded up to the retry-after's resolution rho, and the
client comes back a round trip and a uniform share of the retry spread later,
when the bucket (nobody else drawing on it) admits it with
V = max(0, tau - RTT - spread - rounding); the refused time is that wait, the
round trip, the spread and the rest of the upload after admission, which also
pays the debt down before the turn goes on (an admitted request has uploaded
by then).

Between two admissions the agent spends a gap A_k: the rest of turn k - 1
after the gateway, its tool, and turn k up to the gateway (the think time
before a rollout's first turn).  A_k is its expected deterministic part plus
the drawn decode and tool times (``sim.analytic.agent.age_grid``'s lattice
noise), so the chain is V_arr = max(0, V - A_k), then the admission map, on a
lattice of V, turn by turn through the longest rollout (each turn's law given
it is reached, which does not depend on how long the rollout goes on), and
from one rollout's end to the next one's start until it repeats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.analytic.agent.age_grid import lattice_noise, shifted
from sim.analytic.agent.turn_time import DecodeTime

NODES = 1024
"""Lattice nodes over the debt a lone agent can carry."""
SPREAD_NODES = 16
ROLLOUTS = 6
"""Rollouts followed from a full bucket (the chain forgets its start within a few)."""


@dataclass(frozen=True)
class Bucket:
    """The binding limit as one agent meets it, in seconds of debt."""

    cost_s: np.ndarray
    """c_k / r of each turn's request."""
    tau_s: float
    """(B - 1) / r: the debt at which a unit is left."""
    rtt_s: float
    spread_s: float
    resolution_s: float
    upload_s: np.ndarray
    """Each turn's upload (half a round trip and its bytes), whose rest follows admission."""


@dataclass(frozen=True)
class Gaps:
    """What separates two admissions of one agent: deterministic seconds and noise."""

    before_s: np.ndarray
    """Each turn's part up to the gateway."""
    after_s: np.ndarray
    """Each turn's part after the gateway, without its decode and tool."""
    decode: DecodeTime
    tool: object
    think_s: object
    """The distribution of the pause between rollouts."""
    reach: np.ndarray
    last: np.ndarray


def refused_s(bucket: Bucket, gaps: Gaps) -> tuple[np.ndarray, np.ndarray]:
    """(E[seconds refused], P(refused)) of each turn given it is reached, one agent alone."""
    turns = gaps.reach.size
    horizon_s = float(bucket.cost_s.max()) + bucket.tau_s + bucket.resolution_s
    step_s = horizon_s / (NODES - 1)
    grid = np.arange(NODES) * step_s
    noise = lattice_noise(gaps.decode, gaps.tool, 0.0, step_s, 2 * NODES)
    think_noise = _lattice(gaps.think_s, step_s, 2 * NODES)
    ended = gaps.reach * gaps.last
    debt = np.zeros(NODES)
    debt[0] = 1.0
    out = np.zeros(turns)
    refusals = np.zeros(turns)
    for _ in range(ROLLOUTS):
        ends = np.zeros(NODES)
        for k in range(turns):
            if k == 0:
                kernel = _convolve(
                    think_noise,
                    shifted(np.r_[1.0, np.zeros(2 * NODES - 1)], gaps.before_s[0], step_s, 0.0),
                )
            else:
                quiet_s = gaps.after_s[k - 1] + gaps.before_s[k]
                kernel = shifted(noise, quiet_s, step_s, 0.0)
            arrived = _pay_down(debt, kernel)
            refusals[k] = float(arrived[grid > bucket.tau_s + 1e-12].sum())
            out[k], debt = _admit(arrived, grid, step_s, bucket, k)
            ends += ended[k] * debt
            if k + 1 < turns and gaps.reach[k + 1] <= 0:
                break
        last_after = float((ended @ gaps.after_s) / max(ended.sum(), 1e-300))
        debt = _pay_down(
            ends / max(ends.sum(), 1e-300), shifted(_unit(2 * NODES), last_after, step_s, 0.0)
        )
    return out, refusals


def _unit(size: int) -> np.ndarray:
    out = np.zeros(size)
    out[0] = 1.0
    return out


def _lattice(distribution: object, step_s: float, nodes: int) -> np.ndarray:
    """Masses of a distribution on the lattice (each value split between its neighbours)."""
    k_s = step_s * np.arange(-1, nodes + 1)
    partial = np.asarray(distribution.partial_expectation(k_s))  # type: ignore[attr-defined]
    return np.maximum((partial[:-2] - 2.0 * partial[1:-1] + partial[2:]) / step_s, 0.0)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    size = a.size + b.size
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[: a.size]
    return np.maximum(out, 0.0)


def _pay_down(debt: np.ndarray, gap: np.ndarray) -> np.ndarray:
    """The law of max(0, V - A) on the lattice: V's law ``debt``, A's ``gap``."""
    size = debt.size + gap.size
    # Correlation: mass at V - A = d for d >= 0, the rest (A >= V) at 0.
    spectrum = np.fft.rfft(debt, size) * np.conj(np.fft.rfft(gap, size))
    lagged = np.fft.irfft(spectrum, size)
    out = np.maximum(lagged[: debt.size], 0.0)
    out[0] += max(0.0, 1.0 - out.sum())
    return out


def _admit(
    arrived: np.ndarray, grid: np.ndarray, step_s: float, bucket: Bucket, turn: int
) -> tuple[float, np.ndarray]:
    """Refused seconds of a request meeting debt ``arrived``, and the debt after it."""
    rho, tau = bucket.resolution_s, bucket.tau_s
    over = grid > tau + 1e-12
    excess = grid - tau
    told = rho * np.maximum(1.0, np.ceil(excess / rho - 1e-9))
    rounding = np.where(over, told - excess, 0.0)
    spread = (np.arange(SPREAD_NODES) + 0.5) / SPREAD_NODES * bucket.spread_s
    back = np.maximum(tau - bucket.rtt_s - rounding[:, None] - spread[None, :], 0.0)
    refused_mass = arrived * over
    rest_s = max(0.0, bucket.upload_s[turn] - bucket.rtt_s / 2)
    cost_s = bucket.rtt_s + told + bucket.spread_s / 2 + rest_s
    refused = float(refused_mass @ cost_s)
    after = np.zeros_like(arrived)
    admitted = np.where(over, 0.0, arrived)
    _add(after, grid + bucket.cost_s[turn], admitted, step_s)
    # A refused request's upload follows its admission, so the bucket's debt is that much
    # paid down before the rest of the turn (an admitted one uploads before it arrives).
    for column in range(SPREAD_NODES):
        paid = np.maximum(back[:, column] + bucket.cost_s[turn] - rest_s, 0.0)
        _add(after, paid, refused_mass / SPREAD_NODES, step_s)
    return refused, after


def _add(out: np.ndarray, values_s: np.ndarray, mass: np.ndarray, step_s: float) -> None:
    """Add ``mass`` at ``values_s`` to the lattice, split between neighbouring nodes."""
    position = np.clip(values_s / step_s, 0.0, out.size - 1.0)
    low = np.floor(position).astype(np.int64)
    part = position - low
    high = np.minimum(low + 1, out.size - 1)
    out += np.bincount(low, mass * (1.0 - part), minlength=out.size)
    out += np.bincount(high, mass * part, minlength=out.size)
