"""Numbers written for people: no exponents, thousands separators, three significant
figures (every digit of the integer part kept)."""

from __future__ import annotations

import math


def readable(value: float) -> str:
    """A number for people: three significant figures, thousands separators, no exponent,
    and every digit of the integer part (1374.2 -> '1,374', 0.25 -> '0.25', 1e3 -> '1,000')."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if abs(value) >= 100:
        return f"{round(value):,}"
    decimals = 2 - math.floor(math.log10(abs(value)))
    return f"{round(value, decimals):,.{decimals}f}".rstrip("0").rstrip(".")
