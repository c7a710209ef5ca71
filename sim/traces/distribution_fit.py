"""Choose a distribution of the scenario tree for observed values: maximum likelihood among
the tree's kinds, a goodness-of-fit test, an empirical distribution where none fits.

Each candidate kind (exponential, lognormal, uniform) is fitted by maximum
likelihood with ``scipy.stats`` (location fixed at 0 where the tree's kind has
none) and ranked by AIC; the best is kept if a Kolmogorov-Smirnov test does not
reject it at ``ALPHA``.  The test's p-value is optimistic because the
parameters come from the same data (Lilliefors); with thousands of values it
rejects small misfits all the same, and the empirical distribution then keeps
the data's own quantiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

ALPHA = 0.01
"""Significance level of the goodness-of-fit test."""
EMPIRICAL_POINTS = 64
"""Quantiles an empirical distribution keeps (equal weights)."""
MIN_VALUES = 5
"""Fewer values than this are not fitted (the field keeps the preset's value)."""


@dataclass(frozen=True)
class Fitted:
    """A distribution table for the scenario and how it was chosen."""

    table: dict[str, Any]
    kind: str
    n: int
    log_likelihood: float | None
    ks_statistic: float
    ks_p_value: float | None

    def source(self, what: str) -> str:
        """One line: what it came from, n, the statistic and the goodness of fit."""
        fit = "" if self.ks_p_value is None else f", KS p = {self.ks_p_value:.3g}"
        how = "maximum likelihood" if self.kind != "empirical" else "quantiles (no kind fits)"
        return f"{what}: n = {self.n}, {self.kind} by {how}, KS D = {self.ks_statistic:.3f}{fit}"


def fit_distribution(values: np.ndarray) -> Fitted | None:
    """The tree distribution for ``values`` (None: fewer than ``MIN_VALUES``)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < MIN_VALUES:
        return None
    if np.ptp(values) == 0:
        return Fitted(
            {"kind": "constant", "value": float(values[0])},
            "constant",
            values.size,
            None,
            0.0,
            None,
        )
    candidates = [c for c in (_exponential(values), _lognormal(values), _uniform(values)) if c]
    best = min(candidates, key=lambda c: 2 * c[3] - 2 * c[2])
    table, frozen, log_likelihood, _ = best
    test = stats.kstest(values, frozen.cdf)
    if test.pvalue >= ALPHA:
        return Fitted(
            table,
            table["kind"],
            values.size,
            log_likelihood,
            float(test.statistic),
            float(test.pvalue),
        )
    return _empirical(values)


def _exponential(values: np.ndarray) -> tuple[dict[str, Any], Any, float, int] | None:
    if values.min() < 0:
        return None
    _, scale = stats.expon.fit(values, floc=0)
    frozen = stats.expon(scale=scale)
    return {"kind": "exponential", "mean": float(scale)}, frozen, _ll(frozen, values), 1


def _lognormal(values: np.ndarray) -> tuple[dict[str, Any], Any, float, int] | None:
    if values.min() <= 0:
        return None
    sigma, _, scale = stats.lognorm.fit(values, floc=0)
    frozen = stats.lognorm(sigma, scale=scale)
    table = {"kind": "lognormal", "median": float(scale), "sigma": float(sigma)}
    return table, frozen, _ll(frozen, values), 2


def _uniform(values: np.ndarray) -> tuple[dict[str, Any], Any, float, int] | None:
    low, width = stats.uniform.fit(values)
    if low < 0 or width <= 0:
        return None
    frozen = stats.uniform(low, width)
    table = {"kind": "uniform", "low": float(low), "high": float(low + width)}
    return table, frozen, _ll(frozen, values), 2


def _ll(frozen: Any, values: np.ndarray) -> float:
    return float(np.sum(frozen.logpdf(values)))


def _empirical(values: np.ndarray) -> Fitted:
    """Equal-weight quantiles at the midpoints of ``EMPIRICAL_POINTS`` equal slices."""
    points = min(EMPIRICAL_POINTS, values.size)
    levels = (np.arange(points) + 0.5) / points
    quantiles = np.quantile(values, levels)
    distinct, counts = np.unique(np.maximum(quantiles, 0.0), return_counts=True)
    table = {
        "kind": "empirical",
        "values": [float(v) for v in distinct],
        "weights": [float(c) for c in counts],
    }
    statistic = float(stats.ks_2samp(values, np.repeat(distinct, counts)).statistic)
    return Fitted(table, "empirical", values.size, None, statistic, None)
