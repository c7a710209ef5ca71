"""A WebSocket's age on a grid: P(cold) per turn when the connection may rotate in a rollout.

At the start of turn k let c_k be the probability that the turn opens a new
connection and f_k(a) the probability that it runs warm on a connection of
age a, on the lattice a = j h (j < M, h = lifetime / M).  Turn k lasts
T = d + D + U: its request's expected time without decode (d, longer for a
cold turn), the decode time D and the tool time U.  The connection is still
there at turn k + 1 if it did not drop during T (probability e^(-lambda T):
drops are memoryless) and a + T < lifetime, so

    f_(k+1) = [f_k conv K_warm + c_k K_cold] on a < lifetime,
    c_(k+1) = 1 - mass of f_(k+1),

with K(t) = P(T ~ t) e^(-lambda t), the convolution done by FFT.  D and U
are put on the lattice by splitting each value's mass between its two
neighbouring nodes in proportion to the distance (second differences of the
partial expectation E[max(0, X - k)]), which keeps every mean exact; the shift
by d is split the same way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sim.analytic.agent.turn_time import DecodeTime, cumulants

NODES_PER_TURN = 32
"""Lattice nodes per shortest expected turn (the step is at most that turn / 32)."""
MIN_NODES = 256
MAX_NODES = 2**15


def grid_cold_probability(
    decode: DecodeTime,
    tool_s: Any,
    drops_per_s: float,
    lifetime_s: float,
    cold_s: np.ndarray,
    warm_s: np.ndarray,
) -> np.ndarray:
    """P(turn k is cold), k = 0 .. n, given the deterministic parts of turns 0 .. n - 1.

    ``cold_s`` and ``warm_s`` are each turn's request time without decode, as
    a cold and as a warm turn; ``decode`` and ``tool_s`` are the random parts.
    """
    nodes = lattice_nodes(lifetime_s, float(warm_s.min()) + cumulants(decode, tool_s)[0])
    step_s = lifetime_s / nodes
    noise = lattice_noise(decode, tool_s, drops_per_s, step_s, nodes)
    size = 2 * nodes
    warm = np.zeros(nodes)
    cold = [1.0]
    for cold_part_s, warm_part_s in zip(cold_s, warm_s, strict=True):
        grown = cold[-1] * shifted(noise, cold_part_s, step_s, drops_per_s)
        if cold[-1] < 1.0:
            kernel = shifted(noise, warm_part_s, step_s, drops_per_s)
            spectrum = np.fft.rfft(warm, size) * np.fft.rfft(kernel, size)
            grown = grown + np.fft.irfft(spectrum, size)[:nodes]
        warm = np.maximum(grown, 0.0)
        cold.append(max(0.0, 1.0 - float(warm.sum())))
    return np.array(cold)


def lattice_nodes(lifetime_s: float, shortest_turn_s: float) -> int:
    """Nodes below the lifetime: a power of two giving ``NODES_PER_TURN`` per shortest turn."""
    wanted = lifetime_s * NODES_PER_TURN / max(shortest_turn_s, 1e-9)
    return int(np.clip(2 ** math.ceil(math.log2(max(wanted, 1.0))), MIN_NODES, MAX_NODES))


def lattice_noise(
    decode: DecodeTime, tool_s: Any, drops_per_s: float, step_s: float, nodes: int
) -> np.ndarray:
    """P(D + U ~ j step) e^(-lambda j step) for j < nodes."""
    k_s = step_s * np.arange(-1, nodes + 1)
    decode_mass = _second_difference(decode.partial_expectation(k_s), step_s)
    tool_mass = _second_difference(tool_s.partial_expectation(k_s), step_s)
    survive = np.exp(-drops_per_s * step_s * np.arange(nodes))
    size = 2 * nodes
    spectrum = np.fft.rfft(decode_mass * survive, size) * np.fft.rfft(tool_mass * survive, size)
    return np.maximum(np.fft.irfft(spectrum, size)[:nodes], 0.0)


def shifted(noise: np.ndarray, shift_s: float, step_s: float, drops_per_s: float) -> np.ndarray:
    """The kernel of a turn whose deterministic part is ``shift_s``: ``noise`` moved by it."""
    nodes = noise.size
    position = shift_s / step_s
    whole = math.floor(position)
    part = position - whole
    out = np.zeros(nodes)
    if whole < nodes:
        out[whole:] += (1.0 - part) * noise[: nodes - whole]
    if whole + 1 < nodes:
        out[whole + 1 :] += part * noise[: nodes - whole - 1]
    return out * math.exp(-drops_per_s * shift_s)


def _second_difference(partial: np.ndarray, step_s: float) -> np.ndarray:
    """Lattice masses from the partial expectation at nodes -1 .. nodes."""
    return np.maximum((partial[:-2] - 2.0 * partial[1:-1] + partial[2:]) / step_s, 0.0)
