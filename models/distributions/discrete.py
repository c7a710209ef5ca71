"""Discrete distributions: a constant and an empirical histogram."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from pydantic import Field, model_validator

from models.distributions.base import (
    Bounded,
    DistributionBase,
    check_weights,
    normalised,
    weighted_sum,
)
from models.distributions.choosing import choose
from models.strict import MAX_DISTRIBUTION_VALUE, Float


class Constant(DistributionBase):
    """Always the same value."""

    kind: Literal["constant"] = "constant"
    value: Float = Field(ge=0, le=MAX_DISTRIBUTION_VALUE, description="the value")

    @property
    def mean(self) -> float:
        return self.value

    @property
    def variance(self) -> float:
        return 0.0

    def mean_reciprocal(self) -> float:
        return math.inf if self.value == 0 else 1.0 / self.value

    def _survival(self, x: np.ndarray) -> np.ndarray:
        return np.where(self.value > x, 1.0, 0.0)

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        return np.maximum(0.0, self.value - np.asarray(k, dtype=float))

    def laplace(self, s: ArrayLike) -> np.ndarray:
        return np.exp(-np.asarray(s, dtype=float) * self.value)

    def raw_moment(self, n: int) -> float:
        if n < 0 and self.value == 0:
            return math.inf
        return self.value**n

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        return self.support()

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, self.value)

    def sample_prefix(
        self, rng: np.random.Generator, size: int, keep: int, finish: bool = True
    ) -> np.ndarray:
        return np.full(keep, self.value)

    def is_integer_valued(self) -> bool:
        return float(self.value).is_integer()

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([self.value]), np.array([1.0])


class Empirical(DistributionBase):
    """Discrete values with weights (normalised), e.g. an observed histogram."""

    kind: Literal["empirical"] = "empirical"
    values: tuple[Bounded, ...] = Field(min_length=1, description="the values")
    weights: tuple[Bounded, ...] = Field(min_length=1, description="relative weights")

    @model_validator(mode="after")
    def _check(self) -> Empirical:
        check_weights(self.weights, len(self.values), "values")
        if min(self.values) < 0:
            raise ValueError(f"values must be >= 0, got {min(self.values)}")
        return self

    @property
    def _p(self) -> np.ndarray:
        return normalised(self.weights)

    @property
    def mean(self) -> float:
        return float(self._p @ np.asarray(self.values))

    @property
    def variance(self) -> float:
        v = np.asarray(self.values)
        return float(self._p @ (v - self.mean) ** 2)

    def mean_reciprocal(self) -> float:
        if min(self.values) == 0:
            return math.inf
        return float(self._p @ (1.0 / np.asarray(self.values)))

    def _survival(self, x: np.ndarray) -> np.ndarray:
        return weighted_sum(self._p, (np.where(v > x, 1.0, 0.0) for v in self.values))

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        k = np.asarray(k, dtype=float)
        return weighted_sum(self._p, (np.maximum(0.0, v - k) for v in self.values))

    def laplace(self, s: ArrayLike) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        return weighted_sum(self._p, (np.exp(-s * v) for v in self.values))

    def raw_moment(self, n: int) -> float:
        held = [(p, v) for p, v in zip(self._p, self.values, strict=True) if p > 0]
        if n < 0 and any(v == 0 for _, v in held):
            return math.inf
        return float(sum(p * v**n for p, v in held))

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.values, dtype=float), self._p

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.asarray(self.values)[choose(rng, self._p, size)]

    def is_integer_valued(self) -> bool:
        return all(float(v).is_integer() for v in self.values)

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.values, dtype=float), self._p
