"""The random part of a turn's duration: decode time plus tool time.

A turn that is not the last lasts its request plus its tool.  What varies most
from turn to turn is the decode time D = o / r (output tokens o over the
decode rate r, both drawn per turn) and the tool time U (a mixture over the
tool mix); the connection-loss computations take the rest of the request at
its expected value.  D and U are independent, so their Laplace transforms
multiply and their cumulants add.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.distributions import over_nodes

RATE_NODES = 16
"""Quadrature nodes over the decode rate (its spread is small next to the output's)."""


@dataclass(frozen=True)
class DecodeTime:
    """D = output tokens / decode rate, the two drawn independently per turn."""

    output_tokens: Any
    decode_tps: Any

    def laplace(self, s: ArrayLike) -> np.ndarray:
        """E[exp(-s D)] = E_r[L_o(s / r)]."""
        s = np.asarray(s, dtype=float)
        rates, weights = self.decode_tps.quadrature(RATE_NODES)
        return over_nodes(weights, self.output_tokens.laplace(s[..., None] / rates))

    def partial_expectation(self, k_s: ArrayLike) -> np.ndarray:
        """E[max(0, D - k)] = E_r[PE_o(k r) / r]."""
        k_s = np.asarray(k_s, dtype=float)
        rates, weights = self.decode_tps.quadrature(RATE_NODES)
        tail = self.output_tokens.partial_expectation(k_s[..., None] * rates) / rates
        return over_nodes(weights, tail)

    def raw_moment(self, n: int) -> float:
        """E[D^n] = E[o^n] E[r^-n]."""
        return self.output_tokens.raw_moment(n) * self.decode_tps.raw_moment(-n)


@lru_cache(maxsize=1024)
def cumulants(*parts: Any) -> tuple[float, float, float]:
    """Mean, variance and fourth cumulant of a sum of independent ``parts`` (each with
    ``raw_moment``); kept for the parts seen last (a sweep asks again and again)."""
    mean = variance = fourth = 0.0
    for part in parts:
        m1, spread, central_4 = moments(part)
        mean, variance, fourth = mean + m1, variance + spread, fourth + central_4 - 3 * spread**2
    return mean, variance, fourth


@lru_cache(maxsize=1024)
def moments(part: Any) -> tuple[float, float, float]:
    """Mean, variance and fourth central moment of one part, kept on their own: a sweep's
    points differ in one part (the decode time) and share the others (the tool mix)."""
    m1, m2, m3, m4 = (part.raw_moment(n) for n in range(1, 5))
    spread = max(m2 - m1 * m1, 0.0)
    return m1, spread, m4 - 4 * m3 * m1 + 6 * m2 * m1 * m1 - 3 * m1**4
