"""Means and 95% bands of a result column per distinct x.

With several rows per x (seeds), the band is a t interval of the mean over
them.  With one row per x, it is the run's own 95% CI when the DES gave one
(``*_ci95_low`` / ``*_ci95_high``); the analytic engine has none.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sim.analysis.stats import t_half_width


def aggregate(
    rows: pa.Table, x: str, y: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Distinct x (sorted), the mean of y at each, and the band's low and high (or None)."""
    xs_all = rows[x].to_numpy(zero_copy_only=False)
    ys_all = rows[y].to_numpy(zero_copy_only=False).astype(float)
    xs = np.unique(xs_all)
    index = np.searchsorted(xs, xs_all)
    count = np.bincount(index, minlength=xs.size)
    mean = np.bincount(index, weights=ys_all, minlength=xs.size) / count
    if count.min() >= 2:
        square = np.bincount(index, weights=(ys_all - mean[index]) ** 2, minlength=xs.size)
        half = t_half_width(np.sqrt(square / (count - 1)), count)
        return xs, mean, mean - half, mean + half
    low_column, high_column = _ci_columns(rows, y)
    if low_column is None or count.max() > 1:
        return xs, mean, None, None
    order = np.argsort(xs_all)
    low = rows[low_column].to_numpy(zero_copy_only=False).astype(float)[order]
    high = rows[high_column].to_numpy(zero_copy_only=False).astype(float)[order]
    if np.isnan(low).any() or np.isnan(high).any():
        return xs, mean, None, None
    return xs, mean, low, high


def _ci_columns(rows: pa.Table, y: str) -> tuple[str | None, str | None]:
    stem = y.removesuffix("_mean")
    low, high = f"{stem}_ci95_low", f"{stem}_ci95_high"
    if low in rows.column_names and high in rows.column_names:
        return low, high
    return None, None
