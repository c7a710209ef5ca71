"""Continuous distributions: exponential, log-normal, uniform."""

from __future__ import annotations

import math
from functools import cache
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from pydantic import ConfigDict, Field, model_validator

from models.distributions.base import DistributionBase
from models.strict import MAX_DISTRIBUTION_VALUE, Float


class Exponential(DistributionBase):
    """Exponential with the given mean."""

    kind: Literal["exponential"] = "exponential"
    mean_value: Float = Field(gt=0, le=MAX_DISTRIBUTION_VALUE, alias="mean", description="the mean")

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    @property
    def mean(self) -> float:
        return self.mean_value

    @property
    def variance(self) -> float:
        return self.mean_value**2

    def mean_reciprocal(self) -> float:
        return math.inf

    def _survival(self, x: np.ndarray) -> np.ndarray:
        return np.where(x < 0, 1.0, np.exp(-np.maximum(x, 0.0) / self.mean_value))

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        m = self.mean_value
        return np.where(k <= 0, m - k, m * np.exp(-np.maximum(k, 0.0) / m))

    def laplace(self, s: ArrayLike) -> np.ndarray:
        return 1.0 / (1.0 + np.asarray(s, dtype=float) * self.mean_value)

    def raw_moment(self, n: int) -> float:
        return math.factorial(n) * self.mean_value**n if n >= 0 else math.inf

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        from scipy import special  # imported where used: it costs a third of a second

        values, weights = _gauss(special.roots_laguerre, nodes)
        return self.mean_value * values, weights

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.exponential(self.mean_value, size)


class LogNormal(DistributionBase):
    """Log-normal given by its median and the sigma of log(X)."""

    kind: Literal["lognormal"] = "lognormal"
    median: Float = Field(
        gt=0, le=MAX_DISTRIBUTION_VALUE, description="median (exp of the mean of log X)"
    )
    sigma: Float = Field(ge=0, le=3, description="standard deviation of log X")

    @property
    def mean(self) -> float:
        return self.median * math.exp(self.sigma**2 / 2)

    @property
    def variance(self) -> float:
        s2 = self.sigma**2
        return self.median**2 * math.exp(s2) * (math.exp(s2) - 1)

    def mean_reciprocal(self) -> float:
        return math.exp(self.sigma**2 / 2) / self.median

    def _survival(self, x: np.ndarray) -> np.ndarray:
        if self.sigma == 0:
            return np.where(self.median > x, 1.0, 0.0)
        with np.errstate(divide="ignore"):
            z = (math.log(self.median) - np.log(np.maximum(x, 0.0))) / self.sigma
        from scipy import special

        return np.where(x <= 0, 1.0, special.ndtr(z))

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        """Black's formula: E[X] Phi(d1) - k Phi(d2), d1 = (ln(median / k) + sigma^2) / sigma."""
        k = np.asarray(k, dtype=float)
        if self.sigma == 0:
            return np.maximum(0.0, self.median - k)
        with np.errstate(divide="ignore"):
            d2 = (math.log(self.median) - np.log(np.maximum(k, 0.0))) / self.sigma
        from scipy import special

        tail = self.mean * special.ndtr(d2 + self.sigma) - k * special.ndtr(d2)
        return np.where(k <= 0, self.mean - k, np.maximum(tail, 0.0))

    def raw_moment(self, n: int) -> float:
        return self.median**n * math.exp(n * n * self.sigma**2 / 2)

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        if self.sigma == 0:
            return np.array([self.median]), np.array([1.0])
        return lognormal_nodes(math.log(self.median), self.sigma, nodes)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.lognormal(math.log(self.median), self.sigma, size)


def lognormal_nodes(
    log_median: ArrayLike, sigma: ArrayLike, nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite values and probabilities of log-normals, the nodes on a new last axis.

    ``log_median`` and ``sigma`` may be arrays (one log-normal each).
    """
    from scipy import special

    z, weights = _gauss(special.roots_hermitenorm, nodes)
    mu = np.asarray(log_median, dtype=float)[..., None]
    values = np.exp(mu + np.asarray(sigma, dtype=float)[..., None] * z)
    return values, weights / math.sqrt(2 * math.pi)


class Uniform(DistributionBase):
    """Uniform on [low, high]."""

    kind: Literal["uniform"] = "uniform"
    low: Float = Field(ge=0, le=MAX_DISTRIBUTION_VALUE, description="lower bound")
    high: Float = Field(ge=0, le=MAX_DISTRIBUTION_VALUE, description="upper bound")

    @model_validator(mode="after")
    def _ordered(self) -> Uniform:
        if self.high < self.low:
            raise ValueError(f"high ({self.high}) must be >= low ({self.low})")
        return self

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2

    @property
    def variance(self) -> float:
        return (self.high - self.low) ** 2 / 12

    def mean_reciprocal(self) -> float:
        if self.low == 0:
            return math.inf
        if self.high == self.low:
            return 1.0 / self.low
        return math.log(self.high / self.low) / (self.high - self.low)

    def _survival(self, x: np.ndarray) -> np.ndarray:
        width = self.high - self.low
        if width == 0:
            return np.where(x < self.low, 1.0, 0.0)
        inside = (self.high - np.clip(x, self.low, self.high)) / width
        return np.where(x < self.low, 1.0, inside)

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        width = self.high - self.low
        if width == 0:
            return np.maximum(0.0, self.low - k)
        inside = (self.high - np.clip(k, self.low, self.high)) ** 2 / (2 * width)
        return np.where(k <= self.low, self.mean - k, inside)

    def laplace(self, s: ArrayLike) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        width = self.high - self.low
        spread = s * width
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(spread > 0, -np.expm1(-spread) / spread, 1.0)
        return np.exp(-s * self.low) * ratio

    def raw_moment(self, n: int) -> float:
        a, b = self.low, self.high
        if n < 0 and a == 0:
            return math.inf
        if a == b:
            return a**n
        if n == -1:
            return math.log(b / a) / (b - a)
        return (b ** (n + 1) - a ** (n + 1)) / ((n + 1) * (b - a))

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        from scipy import special

        t, weights = _gauss(special.roots_legendre, nodes)
        return self.mean + (self.high - self.low) / 2 * t, weights / 2

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)


@cache
def _gauss(rule: Any, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of a Gauss rule, computed once per size (an eigenvalue problem)."""
    values, weights = rule(nodes)
    values.flags.writeable = False
    weights.flags.writeable = False
    return values, weights
