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


def constant_rates(decode_tps: ObjectColumn[Any]) -> np.ndarray:
    """Each distinct decode-rate law's value when it is a constant, NaN otherwise.

    A sweep over the decode rate holds thousands of constants: they are read once per column
    form (``ObjectColumn.table``), and the engine passes them to the functions here
    (``ExpectedDraws.constant_rates``).
    """
    return decode_tps.table(_constant_values)


def _constant_values(decode_tps: ObjectColumn[Any]) -> np.ndarray:
    return np.array([law.value if type(law) is Constant else np.nan for law in decode_tps.values])


def decode_laplace(
    output_tokens: ObjectColumn[Any],
    decode_tps: ObjectColumn[Any],
    s: np.ndarray,
) -> np.ndarray:
    """E[exp(-s D)] of each point's decode time, ``s`` of shape (points, 1): what
    ``DecodeTime(o, r).laplace(s)`` gives point by point."""
    out = np.empty(s.shape)
    for nodes in _rate_nodes(decode_tps, constant_rates(decode_tps)):
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
    output_tokens: ObjectColumn[Any],
    decode_tps: ObjectColumn[Any],
    tool_s: ObjectColumn[Any],
) -> np.ndarray:
    """Mean, variance and fourth cumulant of each point's D + U, shape (points, 3): what
    ``cumulants(DecodeTime(o, r), u)`` gives point by point."""
    tokens = np.array([[o.raw_moment(n) for n in MOMENTS] for o in output_tokens.values])
    rates = decode_tps.table(_reciprocal_moments)
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


def _rate_nodes(decode_tps: ObjectColumn[Any], constants: np.ndarray) -> list[_RateNodes]:
    """The distinct decode rates' quadrature nodes, grouped by how many nodes they have (so
    each point sums over its own nodes only, as it would alone)."""
    by_count: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for position in np.flatnonzero(np.isnan(constants)).tolist():
        rates, weights = decode_tps.values[position].quadrature(RATE_NODES)
        by_count.setdefault(rates.size, []).append((position, rates, weights))
    groups = []
    constant = np.flatnonzero(~np.isnan(constants))
    if constant.size:
        rows = np.full(len(decode_tps.values), -1)
        rows[constant] = np.arange(constant.size)
        values = constants[constant][:, None]
        groups.append(_RateNodes(rows, values, np.ones_like(values)))
    for held in by_count.values():
        rows = np.full(len(decode_tps.values), -1)
        rows[[position for position, _, _ in held]] = np.arange(len(held))
        rates = np.stack([r for _, r, _ in held])
        groups.append(_RateNodes(rows, rates, np.stack([w for _, _, w in held])))
    return groups


def _reciprocal_moments(decode_tps: ObjectColumn[Any]) -> np.ndarray:
    """E[r^-n], n = 1 .. 4, of each decode-rate law, shape (laws, 4).  Nonzero constants'
    powers are taken moment by moment over all of them, the same ``value ** -n`` as their
    ``raw_moment``."""
    laws, constants = decode_tps.values, constant_rates(decode_tps)
    out = np.empty((len(laws), len(MOMENTS)))
    powers = ~np.isnan(constants) & (constants != 0)
    for position in np.flatnonzero(~powers).tolist():
        out[position] = [laws[position].raw_moment(-n) for n in MOMENTS]
    values = constants[powers].tolist()
    for column, n in enumerate(MOMENTS):
        out[powers, column] = [value**-n for value in values]
    return out


def _power(values: np.ndarray, n: int) -> np.ndarray:
    return np.array([x**n for x in values.tolist()])
