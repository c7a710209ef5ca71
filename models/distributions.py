"""Non-negative distributions that know their analytic moments.

Every distribution samples with a caller-owned ``numpy.random.Generator``,
never produces a negative value, and exposes ``mean``, ``variance``,
``mean_reciprocal`` (E[1/X], used for rates: time = work x E[1/rate]) and
``survival(x)`` (P[X > x], used for keep-alive expiry).  In TOML a bare number
is a constant; otherwise a table with ``kind``.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator


class _Dist(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @property
    def mean(self) -> float:
        raise NotImplementedError

    @property
    def variance(self) -> float:
        raise NotImplementedError

    def mean_reciprocal(self) -> float:
        """E[1/X]; infinite when X has mass near zero."""
        raise NotImplementedError

    def survival(self, x: float) -> float:
        """P[X > x]."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        raise NotImplementedError

    def is_integer_valued(self) -> bool:
        return False

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """Values and probabilities of a discrete distribution (constant, empirical, mixtures)."""
        raise ValueError(f"{self.kind} is not discrete")


class Constant(_Dist):
    """Always the same value."""

    kind: Literal["constant"] = "constant"
    value: float = Field(ge=0, description="the value")

    @property
    def mean(self) -> float:
        return self.value

    @property
    def variance(self) -> float:
        return 0.0

    def mean_reciprocal(self) -> float:
        return math.inf if self.value == 0 else 1.0 / self.value

    def survival(self, x: float) -> float:
        return 1.0 if self.value > x else 0.0

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, self.value)

    def is_integer_valued(self) -> bool:
        return float(self.value).is_integer()

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([self.value]), np.array([1.0])


class Exponential(_Dist):
    """Exponential with the given mean."""

    kind: Literal["exponential"] = "exponential"
    mean_value: float = Field(gt=0, alias="mean", description="the mean")

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @property
    def mean(self) -> float:
        return self.mean_value

    @property
    def variance(self) -> float:
        return self.mean_value**2

    def mean_reciprocal(self) -> float:
        return math.inf

    def survival(self, x: float) -> float:
        return 1.0 if x < 0 else math.exp(-x / self.mean_value)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.exponential(self.mean_value, size)


class LogNormal(_Dist):
    """Log-normal given by its median and the sigma of log(X)."""

    kind: Literal["lognormal"] = "lognormal"
    median: float = Field(gt=0, description="median (exp of the mean of log X)")
    sigma: float = Field(ge=0, le=3, description="standard deviation of log X")

    @property
    def mean(self) -> float:
        return self.median * math.exp(self.sigma**2 / 2)

    @property
    def variance(self) -> float:
        s2 = self.sigma**2
        return self.median**2 * math.exp(s2) * (math.exp(s2) - 1)

    def mean_reciprocal(self) -> float:
        return math.exp(self.sigma**2 / 2) / self.median

    def survival(self, x: float) -> float:
        if x <= 0:
            return 1.0
        if self.sigma == 0:
            return 1.0 if self.median > x else 0.0
        z = (math.log(x) - math.log(self.median)) / self.sigma
        return 0.5 * math.erfc(z / math.sqrt(2))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.lognormal(math.log(self.median), self.sigma, size)


class Uniform(_Dist):
    """Uniform on [low, high]."""

    kind: Literal["uniform"] = "uniform"
    low: float = Field(ge=0, description="lower bound")
    high: float = Field(ge=0, description="upper bound")

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

    def survival(self, x: float) -> float:
        if x < self.low:
            return 1.0
        if x >= self.high:
            return 0.0
        return (self.high - x) / (self.high - self.low)

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)


class Empirical(_Dist):
    """Discrete values with weights (normalised), e.g. an observed histogram."""

    kind: Literal["empirical"] = "empirical"
    values: tuple[float, ...] = Field(min_length=1, description="the values")
    weights: tuple[float, ...] = Field(min_length=1, description="relative weights")

    @model_validator(mode="after")
    def _check(self) -> Empirical:
        _check_weights(self.weights, len(self.values), "values")
        if min(self.values) < 0:
            raise ValueError(f"values must be >= 0, got {min(self.values)}")
        return self

    @property
    def _p(self) -> np.ndarray:
        w = np.asarray(self.weights, dtype=float)
        return w / w.sum()

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

    def survival(self, x: float) -> float:
        return float(self._p[np.asarray(self.values) > x].sum())

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.asarray(self.values)[rng.choice(len(self.values), size=size, p=self._p)]

    def is_integer_valued(self) -> bool:
        return all(float(v).is_integer() for v in self.values)

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self.values, dtype=float), self._p


class Mixture(_Dist):
    """A weighted mixture of other distributions (e.g. sustained rate plus bursts)."""

    kind: Literal["mixture"] = "mixture"
    weights: tuple[float, ...] = Field(min_length=1, description="relative weights")
    components: tuple[Distribution, ...] = Field(min_length=1, description="the parts")

    @model_validator(mode="after")
    def _check(self) -> Mixture:
        _check_weights(self.weights, len(self.components), "components")
        return self

    @property
    def _p(self) -> np.ndarray:
        w = np.asarray(self.weights, dtype=float)
        return w / w.sum()

    @property
    def mean(self) -> float:
        return float(sum(p * c.mean for p, c in zip(self._p, self.components, strict=True)))

    @property
    def variance(self) -> float:
        second = sum(
            p * (c.variance + c.mean**2) for p, c in zip(self._p, self.components, strict=True)
        )
        return float(second - self.mean**2)

    def mean_reciprocal(self) -> float:
        pairs = zip(self._p, self.components, strict=True)
        return float(sum(p * c.mean_reciprocal() for p, c in pairs))

    def survival(self, x: float) -> float:
        pairs = zip(self._p, self.components, strict=True)
        return float(sum(p * c.survival(x) for p, c in pairs))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        which = rng.choice(len(self.components), size=size, p=self._p)
        out = np.empty(size)
        for index, component in enumerate(self.components):
            chosen = which == index
            out[chosen] = component.sample(rng, int(chosen.sum()))
        return out

    def is_integer_valued(self) -> bool:
        return all(c.is_integer_valued() for c in self.components)

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        parts = [component.support() for component in self.components]
        values = np.concatenate([v for v, _ in parts])
        probability = np.concatenate([w * p for w, (_, p) in zip(self._p, parts, strict=True)])
        unique, inverse = np.unique(values, return_inverse=True)
        return unique, np.bincount(inverse, weights=probability)


def _check_weights(weights: tuple[float, ...], expected: int, what: str) -> None:
    if len(weights) != expected:
        raise ValueError(f"{len(weights)} weights for {expected} {what}")
    if min(weights) < 0 or sum(weights) <= 0:
        raise ValueError("weights must be >= 0 and not all zero")


def _number_is_constant(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"kind": "constant", "value": value}
    return value


Component = Annotated[
    Constant | Exponential | LogNormal | Uniform | Empirical | Mixture,
    Field(discriminator="kind"),
]
Distribution = Annotated[Component, BeforeValidator(_number_is_constant)]
KINDS = ("constant", "exponential", "lognormal", "uniform", "empirical", "mixture")
"""The ``kind`` tags of the distributions."""
"""A field type: a bare number (constant) or a table with ``kind``."""

Mixture.model_rebuild()
