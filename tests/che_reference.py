"""Che's approximation of an LRU cache, an independent reference for the DES's replica cache.

One characteristic time serves every item.

Under the independent reference model (item i requested as a Poisson process
of rate ``rate_i``), an LRU cache of capacity C holds item i at a random time
when it was requested within the last T_C, the characteristic time that fills
the cache: ``sum_i size_i (1 - exp(-rate_i T_C)) = C``.  An item's hit
probability is then ``1 - exp(-rate_i T_C)`` (Che, Tung and Wang, IEEE JSAC
2002; Fricker, Robert and Roberts, ITC 2012, for why it is accurate).  The
analytic fleet's own residency model (``sim.analytic.fleet.residency``) is a
different use of the same idea: sessions with tool gaps, a time-to-live and the
history finished rollouts leave, not Poisson requests for fixed items.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq


def characteristic_time_s(rates: np.ndarray, sizes: np.ndarray, capacity: float) -> float:
    """T_C of an LRU cache of ``capacity`` (in the units of ``sizes``); inf when every item
    fits at once."""
    rates, sizes = np.asarray(rates, dtype=float), np.asarray(sizes, dtype=float)
    if sizes.sum() <= capacity:
        return math.inf

    def overfill(time_s: float) -> float:
        return float(sizes @ -np.expm1(-rates * time_s)) - capacity

    high_s = 1.0 / rates.max()
    while overfill(high_s) < 0:
        high_s *= 2.0
    return float(brentq(overfill, 0.0, high_s, xtol=1e-12 * high_s))


def hit_probability(rates: np.ndarray, time_s: float) -> np.ndarray:
    """Per item, P(a request finds it): requested again within ``time_s``."""
    return -np.expm1(-np.asarray(rates, dtype=float) * time_s)


def hit_rate(rates: np.ndarray, sizes: np.ndarray, capacity: float) -> float:
    """The share of requests that hit, weighted by request rate."""
    rates = np.asarray(rates, dtype=float)
    time_s = characteristic_time_s(rates, sizes, capacity)
    return float(rates @ hit_probability(rates, time_s) / rates.sum())
