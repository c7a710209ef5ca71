"""A short hash of a resolved scenario, so two outputs can be told apart and reproduced.

The hash covers every field ``loopbudget show --resolved`` prints except the
seed, which results report beside it: two analytic runs of the same scenario
share a hash whatever their seeds, and a simulated run is named by its hash
and its seed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import operator
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from models.scenario import Scenario

HASH_DIGITS = 12
"""Hex digits kept of the SHA-256 (48 bits: no collision among a class's scenarios)."""


def scenario_hash(scenario: Scenario) -> str:
    """The first ``HASH_DIGITS`` hex digits of the SHA-256 of the scenario's canonical JSON."""
    fields = scenario.model_dump(mode="json", by_alias=True)
    del fields["seed"]
    return _digest(_canonical(fields))


class HashAgainstBase:
    """``scenario_hash`` of scenarios that share most sections with one ``base``: a section
    that is the base's own object, or one already seen, is not serialized again, and of a
    section that differs from the base's in a few fields only those fields are (a sweep's
    points); the text up to the first section that differs is hashed once."""

    def __init__(self, base: Scenario) -> None:
        dumped = base.model_dump(mode="json", by_alias=True)
        keys = {
            name: field.serialization_alias or field.alias or name
            for name, field in Scenario.model_fields.items()
            if name != "seed"
        }
        self._order = sorted(keys, key=keys.__getitem__)
        self._sections = operator.itemgetter(*self._order)
        self._base = self._sections(base.__dict__)
        self._seen: dict[tuple[int, int], tuple[object, str]] = {}
        self._label = [f"{_canonical(keys[name])}:" for name in self._order]
        self._text = [
            label + _canonical(dumped[keys[name]])
            for label, name in zip(self._label, self._order, strict=True)
        ]
        self._items = [
            _SectionItems(section, dumped[keys[name]])
            if isinstance(section, BaseModel)
            and Scenario.model_fields[name].annotation is type(section)
            and _dumped_field_by_field(type(section))
            and isinstance(dumped[keys[name]], dict)
            else None
            for name, section in zip(self._order, self._base, strict=True)
        ]
        self._keys = [keys[name] for name in self._order]
        self._before = [
            hashlib.sha256(("{" + "".join(f"{t}," for t in self._text[:n])).encode())
            for n in range(len(self._order))
        ]
        self._whole = _digest("{" + ",".join(self._text) + "}")
        self._around: dict[tuple[int, str], tuple[Any, bytes]] = {}

    def __call__(self, scenario: Scenario) -> str:
        sections = self._sections(scenario.__dict__)
        differs = list(map(operator.is_not, sections, self._base))
        if True not in differs:
            return self._whole
        first = differs.index(True)
        items = self._items[first]
        if items is not None and differs.count(True) == 1:
            changed = items.changed(sections[first])
            if changed is not None and len(changed) == 1:
                value = items.value_text(sections[first], changed[0])
                return self._one_value(first, changed[0], value)
        texts = self._text[first:]
        for position in itertools.compress(range(first, len(differs)), differs[first:]):
            section = sections[position]
            known = self._seen.get((position, id(section)))
            if known is None or known[0] is not section:
                text = self._label[position] + self._section_text(scenario, position)
                if len(self._seen) >= _SEEN_SECTIONS:
                    self._seen.clear()
                known = self._seen[position, id(section)] = (section, text)
            texts[position - first] = known[1]
        digest = self._before[first].copy()
        digest.update((",".join(texts) + "}").encode())
        return digest.hexdigest()[:HASH_DIGITS]

    def _one_value(self, position: int, name: str, value: str) -> str:
        """The hash of the base with field ``name`` of the ``position``-th section written as
        ``value``: the text before the value is hashed once, the text after it encoded once."""
        items = self._items[position]
        assert items is not None
        around = self._around.get((position, name))
        if around is None:
            texts = list(self._text)
            texts[position] = self._label[position] + items.with_values({name: _VALUE})
            before, after = ("{" + ",".join(texts) + "}").split(_VALUE)
            around = self._around[position, name] = (
                hashlib.sha256(before.encode()),
                after.encode(),
            )
        digest = around[0].copy()
        digest.update(value.encode())
        digest.update(around[1])
        return digest.hexdigest()[:HASH_DIGITS]

    def _section_text(self, scenario: Scenario, position: int) -> str:
        """Canonical JSON of the ``position``-th section (in key order) of ``scenario``."""
        name = self._order[position]
        items = self._items[position]
        if items is not None:
            text = items.text(getattr(scenario, name))
            if text is not None:
                return text
        dumped = scenario.model_dump(mode="json", by_alias=True, include={name})
        return _canonical(dumped[self._keys[position]])


class _SectionItems:
    """A base section's canonical JSON as its fields' items (``"key":value``, in key order), so
    a section of the same type that shares most field values with it is written by
    replacing the items of the others."""

    def __init__(self, base: BaseModel, dumped: dict[str, Any]) -> None:
        self._type = type(base)
        keys = {
            name: field.serialization_alias or field.alias or name
            for name, field in self._type.model_fields.items()
        }
        order = sorted(dumped)
        self._items = [f"{_canonical(key)}:{_canonical(dumped[key])}" for key in order]
        self._where = {name: order.index(key) for name, key in keys.items() if key in dumped}
        self._keys = keys
        self._labels = {name: f"{_canonical(key)}:" for name, key in keys.items()}
        self._dump = self._type.__pydantic_serializer__.to_python
        self._names = tuple(keys)
        self._values = _values_of(self._names)
        self._base_values = self._values(base.__dict__)
        self._most = len(self._names) // 2
        self._all_written = len(self._where) == len(self._names)

    def changed(self, section: BaseModel) -> list[str] | None:
        """The fields of ``section`` whose values are other objects than the base's, or None
        if the section is written whole (another type, or too many of them: writing it whole
        is then as quick)."""
        if type(section) is not self._type:
            return None
        differs = map(operator.is_not, self._values(section.__dict__), self._base_values)
        changed = list(itertools.compress(self._names, differs))
        if len(changed) > self._most or not (
            self._all_written or self._where.keys() >= set(changed)
        ):
            return None
        return changed

    def text(self, section: BaseModel) -> str | None:
        """The section's canonical JSON, or None if it is written whole."""
        changed = self.changed(section)
        if changed is None:
            return None
        if not changed:
            return self.with_values({})
        whole = self._dump(section, mode="json", by_alias=True)
        return self.with_values({name: _canonical(whole[self._keys[name]]) for name in changed})

    def value_text(self, section: BaseModel, name: str) -> str:
        """Canonical JSON of the value of field ``name`` of ``section``."""
        return _canonical(self._dump(section, mode="json", by_alias=True)[self._keys[name]])

    def with_values(self, texts: dict[str, str]) -> str:
        """The base's canonical JSON with the values of some fields written as ``texts``."""
        items = list(self._items)
        for name, text in texts.items():
            items[self._where[name]] = self._labels[name] + text
        return "{" + ",".join(items) + "}"


def _values_of(names: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """The values of ``names`` in a dict, as a tuple (one name included)."""
    if len(names) == 1:
        return lambda values: (values[names[0]],)
    return operator.itemgetter(*names)


def _dumped_field_by_field(model: type[BaseModel]) -> bool:
    """Whether each field of ``model`` dumps by itself: the same value gives the same text
    whatever the other fields hold (no model or field serializers, no computed fields)."""
    decorators = model.__pydantic_decorators__
    return not (
        decorators.model_serializers or decorators.field_serializers or decorators.computed_fields
    )


_VALUE = "\0"
"""Where a value goes in a text split around it: canonical JSON escapes it in strings."""

_SEEN_SECTIONS = 4096
"""Sections other than the base's whose text a ``HashAgainstBase`` keeps (then it starts
again): scenarios that share a section object share its text, so a sweep's axis value is
serialized once."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
"""``json.dumps(value, sort_keys=True, separators=(",", ":"))`` without building an encoder
for each value."""


_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_ENCODE = (
    _MAKE_ENCODER(
        None,
        _CANONICAL.default,
        json.encoder.encode_basestring_ascii,
        None,
        ":",
        ",",
        True,
        False,
        True,
    )
    if _MAKE_ENCODER is not None
    else None
)
"""The C encoder ``_CANONICAL.encode`` builds for each value, built once (without the check
for circular references, which a dumped model cannot have)."""


def _canonical(value: object) -> str:
    if _ENCODE is None:
        return _CANONICAL.encode(value)
    return "".join(_ENCODE(value, 0))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_DIGITS]
