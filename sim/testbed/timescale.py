"""Time scaling: every duration of a scenario multiplied by one factor, every rate divided by it.

A testbed run compresses scenario time so that a rollout of tens of seconds takes
a few seconds of wall time.  The scenario's fields carry their unit in their
name, so the unit says how a field scales: seconds and milliseconds (``_s``,
``_ms``, also ``per_1k_tokens_ms``) are multiplied by the factor; rates
(``_tps``, ``_per_s``, ``_per_hour``) are divided by it; counts, tokens, bytes and
probabilities do not change.  A distribution scales with its field: its draws
with one seed are the unscaled draws times the factor (common random numbers).
"""

from __future__ import annotations

from typing import Any

from models.loading import validate
from models.scenario import Scenario

_DURATION_SUFFIXES = ("_s", "_ms")
_RATE_SUFFIXES = ("_tps", "_per_s", "_per_hour")
_SCALED_SECTIONS = ("workload", "client", "network", "api", "safety", "inference", "connection")


def scale_time(scenario: Scenario, time_scale: float) -> Scenario:
    """``scenario`` with durations multiplied by ``time_scale`` and rates divided by it."""
    if not time_scale > 0:
        raise ValueError(f"time_scale = {time_scale}: must be > 0")
    data = scenario.model_dump(mode="json", by_alias=True)
    for section in (*_SCALED_SECTIONS, "load"):
        data[section] = _scaled_table(data[section], time_scale)
    return validate(data)


def factor_of(name: str, time_scale: float) -> float:
    """How a field named ``name`` scales: the time scale, its inverse, or 1.

    Rates first: ``bytes_per_s`` ends in ``_s`` too.
    """
    if name.endswith(_RATE_SUFFIXES):
        return 1.0 / time_scale
    if name.endswith(_DURATION_SUFFIXES):
        return time_scale
    return 1.0


def _scaled_table(table: dict[str, Any], time_scale: float) -> dict[str, Any]:
    scaled: dict[str, Any] = {}
    for name, value in table.items():
        factor = factor_of(name, time_scale)
        if isinstance(value, list):
            scaled[name] = [_scaled_table(row, time_scale) for row in value]
        elif isinstance(value, dict) and "kind" in value:
            scaled[name] = _scaled_distribution(value, factor)
        elif isinstance(value, float | int) and not isinstance(value, bool):
            scaled[name] = value * factor if factor != 1.0 else value
        else:
            scaled[name] = value
    return scaled


_SCALE_KEYS = {
    "constant": ("value",),
    "exponential": ("mean",),
    "lognormal": ("median",),
    "uniform": ("low", "high"),
}


def _scaled_distribution(dist: dict[str, Any], factor: float) -> dict[str, Any]:
    """A distribution of ``factor`` times the variable (its shape unchanged)."""
    if factor == 1.0:
        return dist
    kind = dist["kind"]
    if kind == "empirical":
        return {**dist, "values": [v * factor for v in dist["values"]]}
    if kind == "mixture":
        parts = [_scaled_distribution(part, factor) for part in dist["components"]]
        return {**dist, "components": parts}
    return {**dist, **{key: dist[key] * factor for key in _SCALE_KEYS[kind]}}
