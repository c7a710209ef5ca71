"""The parallel-safety excess over the distribution of a turn's tokens.

Parallel classifiers delay a turn only by max(0, M) with M = parallel - prefill
(``models.costs.parallel_margin_s``).  For a given transport and variant (cold
or warm) M is affine in the turn's new tokens N and prior tokens P, and its
three coefficients are read off the cost model itself by finite differences
(M at (N, P) = (0, 0), (step, 0), (0, step) on turn 1).

- Turn 0 has N = the user's task and P = 0, fixed: its excess is exact.
- When M(0, 0) <= 0 and both slopes are <= 0, M <= 0 for every N, P >= 0:
  the excess is exactly zero (the presets).
- Otherwise, at turn k >= 1, N is the previous tool's output (the tool-output
  mixture) and P = F + (k outputs) + (k - 1 tool outputs), independent of N.
  The expectation over N is exact, from the mixture's partial expectation
  E[max(0, N - t)]; P - F is taken as a log-normal with P's exact mean and
  variance, integrated by Gauss-Hermite quadrature (``PRIOR_NODES`` nodes).
  The error against a large Monte Carlo is stated in docs/model/analytic.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.costs import parallel_margin_s
from models.distributions import lognormal_nodes, over_nodes
from models.work import Work
from sim.analytic.agent.expected_draws import ExpectedDraws
from sim.analytic.agent.layout import PROBE_TURN, STEP_TOKENS, TOKEN_PROBES, TurnCount

PRIOR_NODES = 24


@dataclass(frozen=True)
class Excess:
    """Expected excess per variant (cold, warm)."""

    at_probes: tuple[np.ndarray, np.ndarray]
    """What the probe turns' safety stage takes as excess: exact at turn 0, 0 after it."""
    later: tuple[np.ndarray, np.ndarray]
    """E[excess] of turn k >= 1 given it is reached, shape (points, turns); 0 at turn 0."""
    approximate: np.ndarray
    """Per point: some later turn's excess came from the quadrature over P."""


def parallel_excess(
    columns: Any,
    draws: ExpectedDraws,
    count: TurnCount,
    probe_work: tuple[Work, Work],
    shared: Any,
) -> Excess:
    """The excess of every turn, given the work (cold, warm) of the probe turns; ``shared``
    is ``columns`` with what does not vary held once (``sim.analytic.agent.varying``), so
    the margins are computed once where no point's differ."""
    margins = [parallel_margin_s(shared, work) for work in probe_work]
    first = PROBE_TURN == 0
    cold_probe, warm_probe = (np.where(first, np.maximum(0.0, m), 0.0) for m in margins)
    later = []
    approximate = np.zeros(columns.points, dtype=bool)
    for zero, intercept, slope_new, slope_prior in margin_coefficients(columns, margins):
        expected = np.zeros(count.reach.shape)
        rows = np.flatnonzero(~zero)
        if rows.size:
            expected[rows] = expected_excess(
                columns, draws, count, rows, intercept, slope_new, slope_prior
            )
            expected[:, 0] = 0.0
            approximate[rows] = True
        later.append(expected)
    return Excess(
        at_probes=(cold_probe, warm_probe), later=(later[0], later[1]), approximate=approximate
    )


def margin_coefficients(
    columns: Any, margins: list[np.ndarray]
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Per variant: (provably zero, M(0, 0), dM/dN, dM/dP) per point, from the margins at
    the probe turns (the token probes hold (N, P) = (0, 0), (step, 0), (0, step))."""
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for margin in margins:
        m = np.broadcast_to(margin, (columns.points, PROBE_TURN.size))[:, TOKEN_PROBES]
        intercept = m[:, 0]
        slope_new = (m[:, 1] - intercept) / STEP_TOKENS
        slope_prior = (m[:, 2] - intercept) / STEP_TOKENS
        zero = (intercept <= 0) & (slope_new <= 0) & (slope_prior <= 0)
        out.append((zero, intercept, slope_new, slope_prior))
    return out


def expected_excess(
    columns: Any,
    draws: ExpectedDraws,
    count: TurnCount,
    rows: np.ndarray,
    intercept: np.ndarray,
    slope_new: np.ndarray,
    slope_prior: np.ndarray,
) -> np.ndarray:
    """E[max(0, M)] at every turn k >= 1 of the points ``rows``, shape (rows, turns)."""
    k = count.index.astype(float)
    first = columns.workload.first_message_tokens[rows]
    output_mean = draws.mean_output_tokens[rows]
    tool_mean = draws.mean_tool_output_tokens[rows]
    output_var = draws.output_tokens.map(lambda d: d.variance)[rows, None]
    tool_var = draws.tool_output_tokens.map(lambda d: d.variance)[rows, None]
    grown = k * output_mean + np.maximum(k - 1, 0) * tool_mean
    spread = k * output_var + np.maximum(k - 1, 0) * tool_var
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma2 = np.where(grown > 0, np.log1p(spread / grown**2), 0.0)
        log_median = np.log(np.where(grown > 0, grown, 1.0)) - sigma2 / 2
    nodes, weights = lognormal_nodes(log_median, np.sqrt(sigma2), PRIOR_NODES)
    nodes = np.where(grown[..., None] > 0, nodes, 0.0)
    level = intercept[rows, None, None] + slope_prior[rows, None, None] * (first[..., None] + nodes)
    slope = slope_new[rows, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        threshold = np.where(slope != 0, -level / slope, 0.0)
    tool = draws.tool_output_tokens.take(rows)
    beyond = tool.map_with(lambda mix, t: mix.partial_expectation(t), threshold)
    mean_new = tool_mean[..., None]
    per_node = np.where(
        slope > 0,
        slope * beyond,
        np.where(slope < 0, level + slope * mean_new - slope * beyond, np.maximum(level, 0.0)),
    )
    per_node = np.maximum(per_node, 0.0)
    return over_nodes(weights, per_node)
