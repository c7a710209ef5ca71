"""Mixtures of distributions, and the field type that accepts any distribution."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BeforeValidator, Field, model_validator

from models.distributions.base import (
    SAMPLE_CHUNK,
    Bounded,
    DistributionBase,
    check_weights,
    normalised,
    weighted_sum,
)
from models.distributions.choosing import choose
from models.distributions.continuous import Exponential, LogNormal, Uniform
from models.distributions.discrete import Constant, Empirical


class Mixture(DistributionBase):
    """A weighted mixture of other distributions (e.g. sustained rate plus bursts)."""

    kind: Literal["mixture"] = "mixture"
    weights: tuple[Bounded, ...] = Field(min_length=1, description="relative weights")
    components: tuple[Distribution, ...] = Field(min_length=1, description="the parts")

    @model_validator(mode="after")
    def _check(self) -> Mixture:
        check_weights(self.weights, len(self.components), "components")
        return self

    @property
    def _p(self) -> np.ndarray:
        return normalised(self.weights)

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

    def _survival(self, x: np.ndarray) -> np.ndarray:
        return weighted_sum(self._p, (c._survival(x) for c in self.components))

    def partial_expectation(self, k: ArrayLike) -> np.ndarray:
        return weighted_sum(self._p, (c.partial_expectation(k) for c in self.components))

    def laplace(self, s: ArrayLike) -> np.ndarray:
        return weighted_sum(self._p, (c.laplace(s) for c in self.components))

    def raw_moment(self, n: int) -> float:
        pairs = zip(self._p, self.components, strict=True)
        return float(sum(p * c.raw_moment(n) for p, c in pairs if p > 0))

    def quadrature(self, nodes: int) -> tuple[np.ndarray, np.ndarray]:
        parts = [component.quadrature(nodes) for component in self.components]
        values = np.concatenate([v for v, _ in parts])
        weights = np.concatenate([p * w for p, (_, w) in zip(self._p, parts, strict=True)])
        return values, weights

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        which = choose(rng, self._p, size)
        out = np.empty(size)
        for index, component in enumerate(self.components):
            chosen = which == index
            out[chosen] = component.sample(rng, int(chosen.sum()))
        return out

    def sample_prefix(
        self, rng: np.random.Generator, size: int, keep: int, finish: bool = True
    ) -> np.ndarray:
        """The first ``keep`` values of ``sample(rng, size)``: the component choices of all
        ``size`` come first in the stream, then each component's draws in turn, so the
        choices are counted chunk by chunk and each component skips what it does not keep."""
        if keep == 0 and not finish:
            return np.empty(0)
        parts = len(self.components)
        which = choose(rng, self._p, keep)
        kept = np.bincount(which, minlength=parts)
        drawn = kept.copy()
        for start in range(keep, size, SAMPLE_CHUNK):
            chunk = choose(rng, self._p, min(SAMPLE_CHUNK, size - start))
            drawn += np.bincount(chunk, minlength=parts)
        last = parts - 1 if finish else int(np.flatnonzero(kept)[-1])
        out = np.empty(keep)
        for index in range(last + 1):
            out[which == index] = self.components[index].sample_prefix(
                rng, int(drawn[index]), int(kept[index]), finish or index < last
            )
        return out

    def is_integer_valued(self) -> bool:
        return all(c.is_integer_valued() for c in self.components)

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        parts = [component.support() for component in self.components]
        values = np.concatenate([v for v, _ in parts])
        probability = np.concatenate([w * p for w, (_, p) in zip(self._p, parts, strict=True)])
        unique, inverse = np.unique(values, return_inverse=True)
        return unique, np.bincount(inverse, weights=probability)


def _number_is_constant(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"kind": "constant", "value": value}
    if not isinstance(value, dict | DistributionBase):
        raise ValueError(
            f"must be a number (a constant) or a table with kind = one of {', '.join(KINDS)}"
        )
    return value


Component = Annotated[
    Constant | Exponential | LogNormal | Uniform | Empirical | Mixture,
    Field(discriminator="kind"),
]
Distribution = Annotated[Component, BeforeValidator(_number_is_constant)]
"""A field type: a bare number (constant) or a table with ``kind``."""

KINDS = ("constant", "exponential", "lognormal", "uniform", "empirical", "mixture")
"""The ``kind`` tags of the distributions."""
