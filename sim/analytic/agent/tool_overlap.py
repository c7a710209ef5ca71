"""Blocking post-inference work hidden behind a tool started on the function call item.

A streaming client sees the function call at ``response.output_item.done``,
before ``response.completed``.  Started there, the tool runs while the server
finishes its post-inference work P, so only max(0, P - T) of it stays on the
critical path (``models.costs.stage_costs``): the tool hides min(P, T).  P is
affine in the turn's output tokens O and independent of the tool time T, so

    E[min(P, T)] = E_O[ E[T] - E[max(0, T - P(O))] ],

exact in T (its partial expectation) and by Gauss quadrature over O.  It is
the same for every tool-calling turn; the final answer runs no tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.costs import post_cpu_s
from models.distributions import QUADRATURE_NODES, over_nodes
from sim.analytic.agent.columns import ObjectColumn
from sim.analytic.agent.expected_draws import ExpectedDraws


def expected_hidden_post_s(columns: Any, draws: ExpectedDraws) -> np.ndarray:
    """E[min(post work, tool time)] of a tool-calling turn, shape (points, 1); 0 where the
    client starts tools at the completed response."""
    on = columns.client.tool_starts_on_call_item[:, 0] > 0
    out = np.zeros((columns.points, 1))
    if not on.any():
        return out
    rows = np.flatnonzero(on)
    pairs = ObjectColumn.zip(draws.output_tokens, draws.tool_time_s).take(rows)
    fixed_ms = columns.api.post_fixed_ms[rows]
    per_1k_ms = columns.api.post_per_1k_tokens_ms[rows]
    out[rows, 0] = pairs.map_with(_hidden_s, fixed_ms, per_1k_ms)
    return out


@dataclass(frozen=True)
class _PostRows:
    """The post fields of the points that hold one (output, tool time) pair."""

    post_fixed_ms: np.ndarray
    post_per_1k_tokens_ms: np.ndarray


def _hidden_s(pair: tuple[Any, Any], fixed_ms: np.ndarray, per_1k_ms: np.ndarray) -> np.ndarray:
    output_tokens, tool_time = pair
    tokens, weights = output_tokens.quadrature(QUADRATURE_NODES)
    api = _PostRows(post_fixed_ms=fixed_ms, post_per_1k_tokens_ms=per_1k_ms)
    post_s = post_cpu_s(api, np.ones_like(tokens), tokens)
    hidden = tool_time.mean - tool_time.partial_expectation(post_s)
    return over_nodes(weights, hidden)
