"""Least-squares fits with what a profile reports of each: n, coefficients, 95% CIs and R^2."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Fit:
    """``y = design @ coefficients``, fitted on ``n`` measurements."""

    names: tuple[str, ...]
    coefficients: tuple[float, ...]
    ci95: tuple[float, ...]
    """Half-width of each coefficient's 95% confidence interval (Student's t)."""
    r2: float
    n: int

    def __getitem__(self, name: str) -> float:
        return self.coefficients[self.names.index(name)]

    def half_width(self, name: str) -> float:
        return self.ci95[self.names.index(name)]

    def describe(self, formula: str) -> str:
        """The source line of a profiled field: how it was measured and how well it fits."""
        return f"profiled on this machine: n={self.n}, fit {formula}, R^2={self.r2:.4f}"


def linear_fit(names: tuple[str, ...], design: np.ndarray, y: np.ndarray) -> Fit:
    """Ordinary least squares of ``y`` on the columns of ``design``."""
    design, y = np.asarray(design, dtype=float), np.asarray(y, dtype=float)
    n, k = design.shape
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - design @ coefficients
    dof = max(1, n - k)
    variance = float(residuals @ residuals) / dof
    covariance = variance * np.linalg.pinv(design.T @ design)
    t = float(stats.t.ppf(0.975, dof))
    spread = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(residuals @ residuals) / spread if spread > 0 else 1.0
    return Fit(
        names,
        tuple(float(c) for c in coefficients),
        tuple(float(t * np.sqrt(max(0.0, covariance[i, i]))) for i in range(k)),
        r2,
        n,
    )
