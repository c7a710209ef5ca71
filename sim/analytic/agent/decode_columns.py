"""The random part of a turn over many points at once: decode time plus tool time.

``sim.analytic.agent.turn_time`` gives the Laplace transform and cumulants of
one point's decode time D = o / r and tool time U, one Python call per
distinct (output tokens, decode rate) pair.  A sweep over the decode rate has
a distinct pair at every point, so here the same quantities are computed over
whole columns: the output-token distributions (a sweep has few) are read once
each, the decode rates' quadrature nodes are stacked into arrays (a constant
rate is its own single node), and every point is evaluated with the same
elementwise operations, in the same order, as ``DecodeTime`` and
``cumulants``, so each point gets the same bits as evaluated alone.

Powers stay Python's (``x ** n`` is the C library's ``pow``): numpy's own
``power`` loop may round differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.distributions import Constant, over_nodes
from sim.analytic.agent.columns import ObjectColumn
from sim.analytic.agent.turn_time import RATE_NODES, moments

MOMENTS = range(1, 5)
"""The raw moments the cumulants need: E[X^n], n = 1 .. 4."""


@dataclass(frozen=True)
class _RateNodes:
    """Decode-rate distributions with the same number of quadrature nodes, stacked."""

    rows: np.ndarray
    """Shape (distinct,): row of each distinct decode rate here, -1 for one held elsewhere."""
    rates: np.ndarray
    """Shape (held, nodes)."""
    weights: np.ndarray


def decode_laplace(
    output_tokens: ObjectColumn[Any], decode_tps: ObjectColumn[Any], s: np.ndarray
) -> np.ndarray:
    """E[exp(-s D)] of each point's decode time, ``s`` of shape (points, 1): what
    ``DecodeTime(o, r).laplace(s)`` gives point by point."""
    out = np.empty(s.shape)
    for nodes in _rate_nodes(decode_tps):
        held = nodes.rows[decode_tps.index] >= 0
        if not held.any():
            continue
        for tokens, points in output_tokens.take(np.flatnonzero(held)).groups():
            rows = np.flatnonzero(held)[points]
            at = nodes.rows[decode_tps.index[rows]]
            rates, weights = nodes.rates[at][:, None, :], nodes.weights[at][:, None, :]
            out[rows] = over_nodes(weights, tokens.laplace(s[rows][..., None] / rates))
    return out


def noise_cumulants(
    output_tokens: ObjectColumn[Any], decode_tps: ObjectColumn[Any], tool_s: ObjectColumn[Any]
) -> np.ndarray:
    """Mean, variance and fourth cumulant of each point's D + U, shape (points, 3): what
    ``cumulants(DecodeTime(o, r), u)`` gives point by point."""
    tokens = np.array([[o.raw_moment(n) for n in MOMENTS] for o in output_tokens.values])
    rates = _reciprocal_moments(decode_tps.values)
    m1, m2, m3, m4 = (tokens[output_tokens.index] * rates[decode_tps.index]).T
    spread = np.maximum(m2 - m1 * m1, 0.0)
    central_4 = m4 - 4 * m3 * m1 + 6 * m2 * m1 * m1 - 3 * _power(m1, 4)
    tool = np.array([moments(u) for u in tool_s.values])[tool_s.index]
    tool_squared = np.array([moments(u)[1] ** 2 for u in tool_s.values])[tool_s.index]
    mean = 0.0 + m1 + tool[:, 0]
    variance = 0.0 + spread + tool[:, 1]
    fourth = 0.0 + central_4 - 3 * _power(spread, 2)
    fourth = fourth + tool[:, 2] - 3 * tool_squared
    return np.stack([mean, variance, fourth], axis=1)


def _rate_nodes(decode_tps: ObjectColumn[Any]) -> list[_RateNodes]:
    """The distinct decode rates' quadrature nodes, grouped by how many nodes they have (so
    each point sums over its own nodes only, as it would alone)."""
    by_count: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    constant: list[int] = []
    constant_rates: list[float] = []
    for position, law in enumerate(decode_tps.values):
        if type(law) is Constant:
            constant.append(position)
            constant_rates.append(law.value)
        else:
            rates, weights = law.quadrature(RATE_NODES)
            by_count.setdefault(rates.size, []).append((position, rates, weights))
    groups = []
    if constant:
        rows = np.full(len(decode_tps.values), -1)
        rows[constant] = np.arange(len(constant))
        values = np.array(constant_rates)[:, None]
        groups.append(_RateNodes(rows, values, np.ones_like(values)))
    for held in by_count.values():
        rows = np.full(len(decode_tps.values), -1)
        rows[[position for position, _, _ in held]] = np.arange(len(held))
        rates = np.stack([r for _, r, _ in held])
        groups.append(_RateNodes(rows, rates, np.stack([w for _, _, w in held])))
    return groups


def _reciprocal_moments(laws: tuple[Any, ...]) -> np.ndarray:
    """E[r^-n], n = 1 .. 4, of each decode-rate law, shape (laws, 4).  Nonzero constants'
    powers are taken moment by moment over all of them (a sweep over the decode rate holds
    thousands), the same ``value ** -n`` as their ``raw_moment``."""
    out = np.empty((len(laws), len(MOMENTS)))
    constant: list[int] = []
    values: list[float] = []
    for position, law in enumerate(laws):
        if type(law) is Constant and law.value != 0:
            constant.append(position)
            values.append(law.value)
        else:
            out[position] = [law.raw_moment(-n) for n in MOMENTS]
    for column, n in enumerate(MOMENTS):
        out[constant, column] = [value**-n for value in values]
    return out


def _power(values: np.ndarray, n: int) -> np.ndarray:
    return np.array([x**n for x in values.tolist()])
