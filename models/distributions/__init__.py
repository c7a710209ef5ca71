"""Non-negative distributions that know their analytic moments (see ``base`` for the methods).

In TOML a bare number is a constant; otherwise a table with ``kind``.
"""

from models.distribution_kinds import KINDS
from models.distributions.base import (
    QUADRATURE_NODES,
    SAMPLE_CHUNK,
    DistributionBase,
    over_nodes,
    weighted_sum,
)
from models.distributions.continuous import Exponential, LogNormal, Uniform, lognormal_nodes
from models.distributions.discrete import Constant, Empirical
from models.distributions.mixture import Component, Distribution, Mixture

__all__ = [
    "KINDS",
    "QUADRATURE_NODES",
    "SAMPLE_CHUNK",
    "Component",
    "Constant",
    "Distribution",
    "DistributionBase",
    "Empirical",
    "Exponential",
    "LogNormal",
    "Mixture",
    "Uniform",
    "lognormal_nodes",
    "over_nodes",
    "weighted_sum",
]
