"""The scenario tree as a flat list of editable fields, so forms can be generated from it.

A field added to ``models.scenario`` appears here (and in the dashboard's
"advanced" panel) without any change to this module.
"""

from __future__ import annotations

import copy
import json
import typing
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from annotated_types import Ge, Le
from pydantic import BaseModel

from models.assignments import set_path
from models.loading import validate
from models.scenario import Scenario
from models.text_input import parse_json
from sim.analysis.estimates import check_rollout_length

JS_SAFE_INTEGER = 2**53 - 1
"""Browsers hold numbers as doubles: integer inputs must stay within this range."""


class FieldKind(StrEnum):
    """How a field is edited."""

    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    TEXT = "text"
    CHOICE = "choice"
    JSON = "json"
    """Distributions, lists of tables: edited as JSON text."""


@dataclass(frozen=True)
class FieldSpec:
    """One leaf of the scenario tree: its dotted path, how to edit it, its bounds and help."""

    path: str
    kind: FieldKind
    description: str
    source: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def section(self) -> str:
        """The top-level table the field lives in (``scenario`` for top-level fields)."""
        head, sep, _ = self.path.partition(".")
        return head if sep else "scenario"

    @property
    def name(self) -> str:
        return self.path.rpartition(".")[2]

    @property
    def help(self) -> str:
        return f"{self.description}. Source: {self.source}."


def scenario_fields(model: type[BaseModel] = Scenario, prefix: str = "") -> list[FieldSpec]:
    """Every editable leaf of ``model``, depth first in declaration order."""
    specs: list[FieldSpec] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            specs.extend(scenario_fields(annotation, f"{path}."))
            continue
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        kind, choices = _kind(annotation)
        low = next((_number(m.ge) for m in info.metadata if isinstance(m, Ge)), None)
        high = next((_number(m.le) for m in info.metadata if isinstance(m, Le)), None)
        if kind is FieldKind.INT:
            low = None if low is None else max(low, -JS_SAFE_INTEGER)
            high = JS_SAFE_INTEGER if high is None else min(high, JS_SAFE_INTEGER)
        specs.append(
            FieldSpec(
                path=path,
                kind=kind,
                description=info.description or name,
                source=str(extra.get("source", "not documented")),
                minimum=low,
                maximum=high,
                choices=choices,
            )
        )
    return specs


def _number(bound: object) -> float:
    if not isinstance(bound, int | float):
        raise TypeError(f"a scenario field's bound must be a number, not {bound!r}")
    return bound


def field_spec(path: str) -> FieldSpec:
    """The spec of one dotted path, e.g. ``network.rtt_ms``."""
    for spec in scenario_fields():
        if spec.path == path:
            return spec
    raise KeyError(path)


def lookup(data: dict[str, Any], path: str) -> Any:
    """The value at a dotted path of a scenario table."""
    node: Any = data
    for key in path.split("."):
        node = node[key]
    return node


def shown_value(spec: FieldSpec, value: Any) -> Any:
    """A table value as its widget shows it (JSON fields as text)."""
    return json.dumps(value) if spec.kind is FieldKind.JSON else value


def table_value(spec: FieldSpec, shown: Any) -> Any:
    """A widget value back as a table value; bad JSON raises a one-line ScenarioError."""
    if spec.kind is not FieldKind.JSON:
        return shown
    return parse_json(shown, f"{spec.path} = {_short(shown)}")


def apply_field(
    data: dict[str, Any], spec: FieldSpec, shown: Any
) -> tuple[dict[str, Any], Scenario]:
    """``data`` with the field set from its widget value: the new full table and its scenario.

    Raises a one-line ScenarioError when the value or the result is not valid.
    """
    changed = copy.deepcopy(data)
    set_path(changed, spec.path, table_value(spec, shown))
    return validated(changed)


def validated(data: dict[str, Any]) -> tuple[dict[str, Any], Scenario]:
    """The full table of ``data`` (hardware-profile fields filled in) and its scenario.

    A scenario whose rollouts are longer than the rollout length cap is refused
    here too: every view lays its rollout out at once.
    """
    scenario = validate(data)
    check_rollout_length(scenario.name, scenario)
    return scenario.model_dump(mode="json", by_alias=True), scenario


def _short(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57] + "...")


def _kind(annotation: Any) -> tuple[FieldKind, tuple[str, ...]]:
    if annotation is bool:
        return FieldKind.BOOL, ()
    if annotation is int:
        return FieldKind.INT, ()
    if annotation is float:
        return FieldKind.FLOAT, ()
    if annotation is str:
        return FieldKind.TEXT, ()
    if typing.get_origin(annotation) is typing.Literal:
        return FieldKind.CHOICE, tuple(str(a) for a in typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return FieldKind.CHOICE, tuple(member.value for member in annotation)
    return FieldKind.JSON, ()
