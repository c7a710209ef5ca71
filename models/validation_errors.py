"""A pydantic validation error as one user-facing line naming field, value and rule."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from models import distributions
from models.errors import ScenarioError


def one_line(error: ValidationError, model: type[BaseModel], prefix: str = "") -> ScenarioError:
    """Turn the first pydantic error into a ScenarioError naming field, value and rule."""
    first = error.errors(include_url=False)[0]
    path = _field_path(first["loc"])
    where = _cut(".".join(filter(None, [prefix, path])) or "scenario")
    value = first.get("input")
    if first["type"] == "extra_forbidden":
        allowed = ", ".join(_allowed_fields(model, first["loc"][:-1]))
        return ScenarioError(f"{where}: unknown field; allowed: {allowed}")
    if first["type"] == "missing":
        return ScenarioError(f"{where}: missing; this field is required")
    message = first["msg"].removeprefix("Value error, ")
    if not path and first["type"] == "value_error":
        # A rule across sections names its fields itself; the whole tree is no value to show.
        return ScenarioError(message)
    if first["type"] in ("float_type", "int_type") and isinstance(value, bool):
        message += ", not a boolean"
    elif first["type"] == "bool_type":
        message += " (true or false)"
    return ScenarioError(f"{where} = {_short(value)}: {message}")


def _field_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts[-1] = f"{parts[-1]}[{part}]" if parts else f"[{part}]"
        elif part in _TAG_CLASS or str(part).startswith("function-"):
            continue
        else:
            parts.append(str(part))
    return ".".join(parts)


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not isinstance(current, type):
            continue
        fields = getattr(current, "model_fields", {})
        if part in fields:
            current = _inner_model(fields[part].annotation)
        elif part in _TAG_CLASS:
            current = _TAG_CLASS[part]
    return sorted(getattr(current, "model_fields", {}))


_TAG_CLASS: dict[str, type[BaseModel]] = {
    "constant": distributions.Constant,
    "exponential": distributions.Exponential,
    "lognormal": distributions.LogNormal,
    "uniform": distributions.Uniform,
    "empirical": distributions.Empirical,
    "mixture": distributions.Mixture,
}


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _cut(text: str, most: int = 80) -> str:
    """A field's path as a message quotes it: at most ``most`` characters."""
    return text if len(text) <= most else f"{text[: most - 3]}... ({len(text):,} characters)"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
