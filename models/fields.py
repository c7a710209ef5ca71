"""The documented scenario field: description, allowed range and source."""

from __future__ import annotations

from typing import Any

from pydantic import Field


def param(description: str, source: str, **bounds: Any) -> Any:
    """A scenario field with its description, its range (``ge``/``gt``/``le``) and its source."""
    return Field(description=description, json_schema_extra={"source": source}, **bounds)
