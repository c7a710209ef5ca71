"""What every distribution knows: its moments, its tail and the expectations the engines need.

Every distribution samples with a caller-owned ``numpy.random.Generator``,
never produces a negative value, and exposes ``mean``, ``variance``,
``mean_reciprocal`` (E[1/X], used for rates: time = work x E[1/rate]),
``survival(x)`` (P[X > x], used for keep-alive expiry) and, for the analytic
engine, ``partial_expectation(k)`` (E[max(0, X - k)]), ``laplace(s)``
(E[exp(-s X)]), ``raw_moment(n)`` (E[X^n]) and ``quadrature(nodes)`` (values and
probabilities that stand for it in an expectation).  The array methods take
any array shape and return one of that shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, Field

from models.strict import MAX_DISTRIBUTION_VALUE, Float

QUADRATURE_NODES = 48
"""Nodes of the Gauss rule a continuous distribution uses for expectations without a closed form."""

SAMPLE_CHUNK = 1 << 20
"""Values drawn at a time by ``sample_prefix`` when it draws values it does not keep."""

Bounded = Annotated[Float, Field(le=MAX_DISTRIBUTION_VALUE)]
"""A finite number at most ``MAX_DISTRIBUTION_VALUE``: an item of a list of values or weights."""


class DistributionBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    """The tag that names the distribution in TOML (each one's own literal)."""

    @property
    def mean(self) -> float:
        raise NotImplementedError

    @property
    def variance(self) -> float:
        raise NotImplementedError

    def mean_reciprocal(self) -> float:
        """E[1/X]; infinite when X has mass near zero."""
        raise NotImplementedError

    def survival(self, x: ArrayLike) -> float | np.ndarray:
        """P[X > x]: a float for a number, an array for an array."""
        return _like(x, self._survival(np.asarray(x, dtype=float)))

    def _survival(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        """E[max(0, X - k)] at each ``k`` (the stop-loss transform; E[X] - k for k <= 0)."""
        raise NotImplementedError

    def laplace(self, s: ArrayLike) -> np.ndarray:
        """E[exp(-s X)] at each ``s`` >= 0 (here by quadrature; closed forms where they exist)."""
        values, probabilities = self.quadrature(QUADRATURE_NODES)
        s = np.asarray(s, dtype=float)
        return over_nodes(probabilities, np.exp(-s[..., None] * values))

    def raw_moment(self, n: int) -> float:
        """E[X^n] for an integer ``n`` (negative too); infinite where it diverges."""
        raise NotImplementedError

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """Values and probabilities (adding up to 1) standing for X in E[f(X)] for smooth f.

        Exact for discrete distributions; a ``nodes``-point Gauss rule otherwise.
        """
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        raise NotImplementedError

    def sample_prefix(
        self, rng: np.random.Generator, size: int, keep: int, finish: bool = True
    ) -> np.ndarray:
        """The first ``keep`` values of ``sample(rng, size)``, holding no more than a chunk.

        With ``finish`` the generator ends where ``sample(rng, size)`` leaves it (the
        other ``size - keep`` values are drawn chunk by chunk and dropped), so what is
        drawn next from the same stream does not change; without it they are not drawn.
        It holds for distributions that draw value after value, as numpy's samplers
        do: the values come out the same in chunks as in one call.
        """
        head = self.sample(rng, keep)
        if finish:
            for start in range(keep, size, SAMPLE_CHUNK):
                self.sample(rng, min(SAMPLE_CHUNK, size - start))
        return head

    def is_integer_valued(self) -> bool:
        return False

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """Values and probabilities of a discrete distribution (constant, empirical, mixtures)."""
        raise ValueError(f"{self.kind} is not discrete")


def weighted_sum(weights: Iterable[float], terms: Iterable[np.ndarray]) -> np.ndarray:
    """Sum of ``weight * term``, added in order.

    The order is fixed, so every element gets the same rounding whatever the
    shape of the arrays: evaluating many points at once gives the same bits as
    evaluating each alone.
    """
    total = np.zeros(())
    for weight, term in zip(weights, terms, strict=True):
        total = total + weight * term
    return total


def over_nodes(weights: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Sum of ``weights[i] * terms[..., i]``: quadrature nodes on the last axis.

    Each element is reduced over its own nodes, so its rounding does not
    depend on the leading axes (how many points are evaluated at once).
    """
    return np.sum(terms * weights, axis=-1)


def check_weights(weights: tuple[float, ...], expected: int, what: str) -> None:
    """Refuse weights that do not match ``expected`` parts, are negative or all zero."""
    if len(weights) != expected:
        raise ValueError(f"{len(weights)} weights for {expected} {what}")
    if min(weights) < 0 or sum(weights) <= 0:
        raise ValueError("weights must be >= 0 and not all zero")


def normalised(weights: tuple[float, ...]) -> np.ndarray:
    """Weights divided by their sum."""
    w = np.asarray(weights, dtype=float)
    return w / w.sum()


def _like(x: ArrayLike, value: np.ndarray) -> float | np.ndarray:
    return float(value) if np.ndim(x) == 0 else value
