"""Draw indices by probability: numpy's ``Generator.choice``, the same values, faster for few.

``rng.choice(n, size, p=p)`` (with replacement) takes one uniform per value from
``rng.random(size)`` and finds it among the cumulative probabilities with a
binary search (``searchsorted``, side right), whose branches random values
defeat: for the few kinds of a workload's tools or a mixture's components it
costs more than drawing the uniforms.  Counting the cumulative probabilities at
or below each uniform gives the same index with one comparison per choice over
the whole array.  ``tests/test_choosing.py`` holds it to numpy's own choice.
"""

from __future__ import annotations

import numpy as np

_COUNTED = 8
"""Up to this many choices the index is counted; beyond, searched as numpy does."""


def choose(rng: np.random.Generator, probabilities: np.ndarray, size: int) -> np.ndarray:
    """``rng.choice(len(probabilities), size, p=probabilities)``: the same indices from the
    same draws (``probabilities`` as validated: non-negative, adding up to one)."""
    cdf = np.asarray(probabilities, dtype=float).cumsum()
    cdf /= cdf[-1]
    uniform = rng.random(size)
    if len(cdf) > _COUNTED:
        return cdf.searchsorted(uniform, side="right").astype(np.int64)
    # The last bound is exactly 1.0 (a number over itself), above every uniform.
    index = np.zeros(size, dtype=np.int64)
    for bound in cdf[:-1]:
        index += uniform >= bound
    return index
