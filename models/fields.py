"""Building blocks of the scenario tree: the documented field and the frozen section."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def param(description: str, source: str, **bounds: Any) -> Any:
    """A scenario field with its description, its range (``ge``/``gt``/``le``) and its source."""
    return Field(description=description, json_schema_extra={"source": source}, **bounds)


class Section(BaseModel):
    """A part of the scenario tree: immutable, and unknown fields are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
