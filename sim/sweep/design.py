"""Design expansion: the points of a sweep, as ordered path -> value assignments.

``grid``: every combination of the explicit and range axes (the first axis
varies slowest), crossed with the sampled design if there is one.
``one-at-a-time``: the base point (no assignment), then each value of each
axis alone, in file order (for sensitivity and tornado plots).
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import qmc

if TYPE_CHECKING:
    from sim.sweep.axes import Sample
    from sim.sweep.sweepfile import SweepFile


def expand(file: SweepFile) -> list[dict[str, Any]]:
    """The points of the sweep in their canonical order."""
    grid_axes = [axis for axis in file.axes if axis.kind != "sampled"]
    if file.design == "one-at-a-time":
        alone = [{axis.path: value} for axis in grid_axes for value in axis.grid_values()]
        return [{}, *alone]
    paths = [axis.path for axis in grid_axes]
    combos = itertools.product(*(axis.grid_values() for axis in grid_axes))
    grid = [dict(zip(paths, combo, strict=True)) for combo in combos]
    if file.sample is None:
        return grid
    samples = sampled_points(file, file.sample)
    return [{**g, **s} for g in grid for s in samples]


def sampled_points(file: SweepFile, sample: Sample) -> list[dict[str, Any]]:
    """The design ``sample`` over the ``low``/``high`` axes, reproducible from its seed."""
    axes = [axis for axis in file.axes if axis.kind == "sampled"]
    if sample.method == "lhs":
        unit = qmc.LatinHypercube(d=len(axes), rng=sample.seed).random(sample.points)
    else:
        unit = np.random.default_rng(sample.seed).random((sample.points, len(axes)))
    columns = [axis.from_unit(unit[:, index]) for index, axis in enumerate(axes)]
    paths = [axis.path for axis in axes]
    return [dict(zip(paths, row, strict=True)) for row in zip(*columns, strict=True)]


def point_count(file: SweepFile) -> int:
    """Number of points, without expanding the design."""
    sizes = [len(axis.grid_values()) for axis in file.axes if axis.kind != "sampled"]
    if file.design == "one-at-a-time":
        return 1 + sum(sizes)
    samples = file.sample.points if file.sample is not None else 1
    return math.prod(sizes) * samples
