"""Load points as a user writes them: a comma-separated list of positive numbers."""

from __future__ import annotations

import math

from models.errors import ScenarioError


def parse_points(option: str, text: str, kind: type) -> list:
    """A comma-separated list of positive, finite numbers, e.g. ``1,10,100``; no empty item."""
    try:
        values = [kind(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or any(not (value > 0 and math.isfinite(value)) for value in values):
        what = "integers >= 1" if kind is int else "finite numbers > 0"
        raise ScenarioError(f"{option} = {text!r}: expected a comma-separated list of {what}")
    return values
