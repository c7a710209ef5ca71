"""What a sweep's rows depend on: the hash of every resolved point scenario.

A point's scenario is resolved from the base (the presets and files it
extends), the sweep's fixed overrides and the point's values; validation
fills in what the files leave to registries, such as a hardware profile's
rates from ``models/hardware.toml``.  The fingerprint hashes every point's
resolved scenario (``models.scenario_hash``, or its validation error) with the
sweep, its seeds and the package version, so an edit anywhere that changes a
point makes ``--resume`` refuse to mix old rows with new ones.  Each part
records its chunk, the fingerprint and its runs' point hashes
(``part_metadata``), so a part of another chunk or of another sweep is never
taken for the one it replaces.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.scenario import Scenario
from models.scenario_hash import HASH_DIGITS, scenario_hash
from sim.sweep.design import expand
from sim.sweep.points import Points, point_scenario
from sim.sweep.sweepfile import Sweep

FINGERPRINT_KEY = b"loopbudget.fingerprint"
CHUNK_KEY = b"loopbudget.chunk"
RUNS_KEY = b"loopbudget.runs"
"""Parquet key-value metadata of a part: the sweep's fingerprint, its chunk, and its runs as
``[point, seed, point hash]`` in order."""
_REFUSED = b"!"
"""First character of the hash of a point that validation refuses (its rows hold the error)."""


@dataclass(frozen=True)
class Resolved:
    """Every point's hash, in design order, and the fingerprint over them."""

    hashes: np.ndarray
    fingerprint: str

    def runs(self, runs: list[tuple[int, int]]) -> list[list[Any]]:
        """``[point, seed, hash]`` of each run (point, seed)."""
        return [[point, seed, self.hashes[point].decode()] for point, seed in runs]


def point_hash(
    base_raw: dict[str, Any],
    assignments: dict[str, Any],
    visit: Callable[[Scenario], None] | None = None,
    points: Points | None = None,
) -> bytes:
    """The resolved scenario's hash (``visit`` sees the scenario), or for a point validation
    refuses, the hash of why.

    ``points`` (the sweep's points validated against its base) gives the same scenario and
    hash at a fraction of the cost; a point it refuses is validated whole, so the hash
    holds the error message of the whole scenario's validation either way.
    """
    fast: Scenario | None = None
    if points is not None:
        try:
            fast = points.scenario(assignments)
        except Exception:  # validated whole below, for the whole scenario's message
            fast = None
    if fast is not None and points is not None:
        if visit is not None:
            visit(fast)
        return points.hash(fast).encode()
    try:
        scenario = point_scenario(base_raw, assignments)
    except Exception as error:  # the point's rows record it; its hash must still be stable
        text = f"{type(error).__name__}: {error}".encode()
        return _REFUSED + hashlib.sha256(text).hexdigest()[: HASH_DIGITS - 1].encode()
    if visit is not None:
        visit(scenario)
    return scenario_hash(scenario).encode()


def resolve(
    sweep: Sweep,
    version: str,
    advance: Callable[[int], None] | None = None,
    visit: Callable[[Scenario], None] | None = None,
    keep: dict[int, Scenario] | None = None,
) -> Resolved:
    """Resolve every point of ``sweep`` (``advance`` is told of each, ``visit`` sees each
    resolved scenario, ``keep`` gets it by point number) and fingerprint them."""
    head = {
        "sweep": sweep.file.model_dump(mode="json"),
        "seeds": sweep.seeds,
        "version": version,
    }
    digest = hashlib.sha256(json.dumps(head, sort_keys=True).encode())
    points = expand(sweep.file)
    validated = Points(sweep.base_raw)
    found: list[bytes] = []
    seen = visit
    if keep is not None:

        def seen(scenario: Scenario) -> None:
            keep[len(found)] = scenario
            if visit is not None:
                visit(scenario)

    for first in range(0, len(points), _TOLD_EVERY):
        for index in range(first, min(first + _TOLD_EVERY, len(points))):
            found.append(point_hash(sweep.base_raw, points[index], seen, validated))
        if advance is not None:
            advance(min(_TOLD_EVERY, len(points) - first))
    hashes = np.array(found, dtype=f"S{HASH_DIGITS}")
    digest.update(hashes.tobytes())
    return Resolved(hashes, digest.hexdigest())


_TOLD_EVERY = 100
"""Points resolved between two calls of ``advance`` (a progress bar's update costs as much
as resolving a point)."""


def part_metadata(
    resolved: Resolved, chunk: int, runs: list[tuple[int, int]]
) -> dict[bytes, bytes]:
    """What a part records about itself."""
    return {
        FINGERPRINT_KEY: resolved.fingerprint.encode(),
        CHUNK_KEY: str(chunk).encode(),
        RUNS_KEY: json.dumps(resolved.runs(runs)).encode(),
    }
