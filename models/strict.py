"""Value types that do not coerce: the scenario tree's and the sweep file's numbers and flags.

A boolean is not a number (``rtt_ms = true`` is an error, not 1.0), text is
neither a number nor a boolean (``store = "yes"`` is an error), a number is
not a boolean (``config_cache = 0`` is an error), and every float is finite.
An integer is still a valid float: ``rtt_ms = 30`` reads as 30.0.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AllowInfNan, Strict

Float = Annotated[float, Strict(), AllowInfNan(False)]
"""A finite number: an int or a float, never a boolean or text."""

Int = Annotated[int, Strict()]
"""An integer, never a boolean, a float or text."""

Bool = Annotated[bool, Strict()]
"""``true`` or ``false``, never a number or text."""

MAX_DISTRIBUTION_VALUE = 1e9
"""Upper bound on every distribution parameter (a value, mean, median, bound or weight):
far above any token count, duration or rate of the model, and low enough that the
moments the analytic engine raises to the fourth power stay finite."""
