"""Load points as a user writes them: a comma-separated list of positive numbers."""

from __future__ import annotations

from models.errors import ScenarioError


def parse_points(option: str, text: str, kind: type) -> list:
    """A comma-separated list of positive numbers, e.g. ``1,10,100``."""
    try:
        values = [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or any(not value > 0 for value in values):
        what = "integers >= 1" if kind is int else "numbers > 0"
        raise ScenarioError(f"{option} = {text!r}: expected a comma-separated list of {what}")
    return values
