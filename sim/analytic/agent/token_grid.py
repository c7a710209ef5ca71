"""Distributions of KV tokens on a lattice, for sums of session histories held by a replica.

A replica's memory model needs P(sum of entry sizes <= capacity) for sums of
random numbers of random sizes.  Sizes live on a lattice of ``CELLS`` steps
below the capacity (a size is split between its two neighbouring nodes, which
keeps every mean exact), and sums are products of discrete Fourier transforms
on a lattice four times longer.  The masses are damped by theta^x before the
transform, so what a sum puts past the lattice's end wraps around with a
weight of at most ``ALIAS`` (Abate and Whitt's damping); only the lattice
below the capacity is read back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CELLS = 1024
"""Lattice steps below the capacity."""
SPAN = 4
"""The lattice covers SPAN times the capacity."""
ALIAS = 1e-12


@dataclass(frozen=True)
class Sizes:
    """A discrete distribution of entry sizes (tokens)."""

    tokens: np.ndarray
    probability: np.ndarray

    @classmethod
    def normal(cls, means: np.ndarray, variances: np.ndarray, weights: np.ndarray) -> Sizes:
        """A mixture of normals (cut at 0), each by a five-point Gauss-Hermite rule."""
        nodes, node_weights = np.polynomial.hermite_e.hermegauss(5)
        node_weights = node_weights / node_weights.sum()
        tokens = np.asarray(means)[:, None] + np.sqrt(np.asarray(variances))[:, None] * nodes
        probability = np.asarray(weights)[:, None] * node_weights
        return cls(np.maximum(tokens, 0.0).ravel(), probability.ravel())

    @property
    def mean(self) -> float:
        return float(self.tokens @ self.probability / self.probability.sum())


class TokenGrid:
    """The lattice of one replica's capacity."""

    def __init__(self, capacity_tokens: float) -> None:
        self.capacity_tokens = max(capacity_tokens, 1.0)
        self.step = self.capacity_tokens / CELLS
        self.length = SPAN * CELLS
        self.damping = ALIAS ** (1.0 / self.length)
        self._weights = self.damping ** np.arange(self.length)

    def masses(self, sizes: Sizes) -> np.ndarray:
        """The lattice masses of ``sizes`` (sizes past the lattice at its last node)."""
        position = np.minimum(sizes.tokens / self.step, self.length - 1.0)
        low = np.floor(position).astype(np.int64)
        part = position - low
        high = np.minimum(low + 1, self.length - 1)
        out = np.bincount(low, sizes.probability * (1.0 - part), minlength=self.length)
        out += np.bincount(high, sizes.probability * part, minlength=self.length)
        return out

    def transform(self, masses: np.ndarray) -> np.ndarray:
        """The damped transform of lattice masses (products of transforms are sums)."""
        return np.fft.fft(masses * self._weights)

    def cumulative(self, transforms: np.ndarray) -> np.ndarray:
        """P(sum <= x) at the lattice nodes x = 0 .. CELLS from sums' damped transforms (one
        per row)."""
        masses = np.real(np.fft.ifft(transforms, axis=-1))[..., : CELLS + 1]
        masses = masses / self._weights[: CELLS + 1]
        return np.clip(np.cumsum(np.maximum(masses, 0.0), axis=-1), 0.0, 1.0)

    def at_most(self, cumulative: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        """P(sum <= tokens) from ``cumulative`` at the nodes, for ``tokens`` up to the capacity."""
        position = np.asarray(tokens, dtype=float) / self.step
        below = np.interp(np.clip(position, 0.0, CELLS), np.arange(CELLS + 1), cumulative)
        return np.where(position < 0, 0.0, below)

    def one(self) -> np.ndarray:
        """The transform of an empty sum."""
        return np.ones(self.length, dtype=complex)
