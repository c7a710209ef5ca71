"""Numeric options of the command line, read by the one number parser (``models.numbers``).

A number of more than 64 digits is refused by its length, not converted into a traceback
or an infinity, and a bad value is quoted at most a few dozen characters long (a one-line
``ScenarioError``, as every other bad input).
"""

from __future__ import annotations

from typing import Any

import click

from models.numbers import parse_number


class _Number(click.ParamType):
    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.name = "integer" if kind is int else "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, self.kind) and not isinstance(value, bool):
            return value
        option = param.opts[0] if param is not None and param.opts else "value"
        return parse_number(str(value), self.kind, option)


INT = _Number(int)
"""An integer option."""
FLOAT = _Number(float)
"""A finite number option."""
