"""One-line, user-facing errors for bad input.

Kept free of pydantic and numpy: every command imports it, the quick ones too
(``models.validation_errors`` turns a pydantic error into one).
"""

from __future__ import annotations


class ScenarioError(ValueError):
    """Bad user input: the message is one line naming the field, the value and what is allowed."""
