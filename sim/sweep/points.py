"""A point of a sweep: the base scenario table with the point's assignments, validated."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from models.assignments import MAX_PATH_CHARS, set_path
from models.errors import ScenarioError
from models.loading import validate
from models.scenario import Scenario
from models.scenario_hash import HashAgainstBase, scenario_hash


def point_table(base_raw: dict[str, Any], assignments: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``base_raw`` with ``assignments`` (path -> value) set.

    Only the tables and lists along each assigned path are copied (the rest is
    shared with ``base_raw``, which is never modified), so building a point
    costs little next to validating it.  ``set_path`` reports bad paths.
    """
    data = dict(base_raw)
    for path, value in assignments.items():
        node: Any = data
        for key in _keys(path)[:-1]:
            child = _child(node, key)
            if not isinstance(child, dict | list):
                break
            copied = dict(child) if isinstance(child, dict) else list(child)
            node[key] = copied
            node = copied
        set_path(data, path, value)
    return data


def point_scenario(
    base_raw: dict[str, Any], assignments: dict[str, Any], seed: int | None = None
) -> Scenario:
    """The validated scenario of one point (with ``seed`` as its root seed, if given)."""
    extra = {"seed": seed} if seed is not None else {}
    return validate(point_table(base_raw, {**assignments, **extra}))


class Points:
    """A sweep's points validated against one validated base: a point validates again only
    the sections its assignments touch (the others are the base's own objects), each
    distinct section once (one validation per axis value when each axis sets its own
    section), then the scenario's rules across sections; the same scenario as
    ``point_scenario``.  A point any of that refuses is validated whole, so its error is
    the whole scenario's message.  A base that is not valid alone validates each point
    whole."""

    def __init__(self, base_raw: dict[str, Any]) -> None:
        self.base_raw = base_raw
        self.base: Scenario | None = None
        self._hash: HashAgainstBase | None = None
        self._sections: dict[tuple[Any, ...], Any] = {}
        self._field_names = frozenset(Scenario.model_fields)
        self._rules = _rules_across_sections()
        try:
            self.base = validate(base_raw)
        except (ScenarioError, ValidationError):
            return
        self._hash = HashAgainstBase(self.base)

    def scenario(self, assignments: dict[str, Any], seed: int | None = None) -> Scenario:
        """The validated scenario of one point (with ``seed`` as its root seed, if given)."""
        changes = assignments if seed is None else {**assignments, "seed": seed}
        if self.base is None:
            return validate(point_table(self.base_raw, changes))
        try:
            return self._by_sections(changes)
        except Exception:  # validated whole below, for the whole scenario's message
            return validate(point_table(self.base_raw, changes))

    def hash(self, scenario: Scenario) -> str:
        """``scenario_hash`` of a point's scenario."""
        return self._hash(scenario) if self._hash is not None else scenario_hash(scenario)

    def _by_sections(self, changes: dict[str, Any]) -> Scenario:
        """The point from its validated sections: the scenario's validation takes a section
        that is already a model as it is, and checks the rules across sections."""
        assert self.base is not None
        touched = _sections_of(tuple(changes))
        if len(touched) == 1:  # the paths of one section: its changes are all the changes
            name, _, keys = touched[0]
            sections = {name: self._section(name, changes, keys)}
        else:
            sections = {
                name: self._section(name, {path: changes[path] for path in paths}, keys)
                for name, paths, keys in touched
            }
        rules = self._rules
        if rules is None:
            return Scenario.model_validate({**self.base.__dict__, **sections})
        # What the scenario's validation does with a table of validated sections, each of
        # which it takes as it is, without its pass over every field.
        scenario: Any = Scenario.__new__(Scenario)
        _set(scenario, "__dict__", {**self.base.__dict__, **sections})
        _set(scenario, "__pydantic_fields_set__", set(self._field_names))
        _set(scenario, "__pydantic_extra__", None)
        _set(scenario, "__pydantic_private__", None)
        for rule in rules:
            scenario = rule(scenario)
        return scenario

    def _section(self, name: str, changes: dict[str, Any], keys: tuple[str, ...] | None) -> Any:
        """Section ``name`` of the base with ``changes`` set (each setting one of its ``keys``,
        if given), validated once per distinct set of changes (a top-level field alone, such
        as the seed, by its own rules)."""
        key = (name, *map(_assigned, changes, changes.values()))
        found = self._sections.get(key)
        if found is None:
            found = _field_validator(name)(self._section_table(name, changes, keys))
            if len(self._sections) >= _DISTINCT_SECTIONS:
                self._sections.clear()
            self._sections[key] = found
        return found

    def _section_table(
        self, name: str, changes: dict[str, Any], keys: tuple[str, ...] | None
    ) -> Any:
        """Section ``name``'s table with ``changes`` set (``point_table``'s, without copying
        the scenario's table when each change sets one of the section's own ``keys``)."""
        own = self.base_raw.get(name)
        if isinstance(own, dict) and keys is not None:
            table = own.copy()
            table.update(zip(keys, changes.values(), strict=True))
            return table
        return point_table({name: self.base_raw[name]}, changes)[name]


@functools.lru_cache(maxsize=1024)
def _sections_of(
    paths: tuple[str, ...],
) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...] | None], ...]:
    """The sections ``paths`` set (their first keys), each with its paths in order and the
    section's keys they name (``_own_keys``)."""
    touched: dict[str, list[str]] = {}
    for path in paths:
        touched.setdefault(str(_keys(path)[0]), []).append(path)
    return tuple((name, tuple(own), _own_keys(tuple(own))) for name, own in touched.items())


@functools.lru_cache(maxsize=1024)
def _own_keys(paths: tuple[str, ...]) -> tuple[str, ...] | None:
    """The section's keys that ``paths`` name, if each is a key of a section
    (``inference.decode_tps``) that ``set_path`` takes as it is, else None."""
    keys = [_keys(path) for path in paths]
    if all(
        len(k) == 2 and isinstance(k[1], str) and len(p) <= MAX_PATH_CHARS
        for k, p in zip(keys, paths, strict=True)
    ):
        return tuple(str(k[1]) for k in keys)
    return None


def _assigned(path: str, value: Any) -> tuple[Any, ...]:
    """An assignment as a key of the validated sections: its path, its value's type and the
    value (which tells 1, 1.0 and True apart), or the value's repr where equal values of one
    type may differ (0.0 and -0.0) or a value is not hashable."""
    kind = type(value)
    if kind in _SAME_WHEN_EQUAL or (kind is float and value):
        return (path, kind, value)
    return (path, repr(value))


_SAME_WHEN_EQUAL = frozenset({int, bool, str})
"""Types whose equal values are one value (as nonzero floats are; NaN, equal to nothing,
is found again only as the same object)."""

_DISTINCT_SECTIONS = 4096
"""Validated sections a ``Points`` keeps (then it starts again): a sweep's axis values."""


_set = object.__setattr__


@functools.cache
def _rules_across_sections() -> list[Callable[[Scenario], Scenario]] | None:
    """The scenario's "after" validators, when they and the validation of each (already
    validated) section are all its validation does, else None."""
    decorators = Scenario.__pydantic_decorators__
    validators = list(decorators.model_validators.values())
    plain = (
        not decorators.field_validators
        and not decorators.validators
        and not decorators.root_validators
        and Scenario.model_post_init is BaseModel.model_post_init
        and not Scenario.__private_attributes__
        and Scenario.model_config.get("extra") != "allow"
        and all(v.info.mode == "after" and _takes_model_alone(v.func) for v in validators)
    )
    return [v.func for v in validators] if plain else None


def _takes_model_alone(rule: Callable[..., Any]) -> bool:
    """A validator of the model alone, without pydantic's ``info``."""
    return len(inspect.signature(rule).parameters) == 1


@functools.cache
def _field_validator(name: str) -> Callable[[Any], Any]:
    """Validates one field of ``Scenario`` as the scenario's own validation does (the core
    of ``TypeAdapter.validate_python``, which passes its defaults on to it)."""
    field = Scenario.model_fields[name]
    annotated: Any = Annotated[field.annotation, field]
    return TypeAdapter(annotated).validator.validate_python


@functools.lru_cache(maxsize=1024)
def _keys(path: str) -> tuple[str | int, ...]:
    """``workload.tools[0].weight`` -> ("workload", "tools", 0, "weight"), as set_path reads it."""
    return tuple(
        int(p) if p.isdigit() else p for p in re.sub(r"\[(\d+)\]", r".\1", path).split(".")
    )


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    return None
