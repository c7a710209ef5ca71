"""A short hash of a resolved scenario, so two outputs can be told apart and reproduced.

The hash covers every field ``loopbudget show --resolved`` prints except the
seed, which results report beside it: two analytic runs of the same scenario
share a hash whatever their seeds, and a simulated run is named by its hash
and its seed.
"""

from __future__ import annotations

import hashlib
import json

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
    that is the base's own object, or one already seen, is not serialized again (a sweep's
    points)."""

    def __init__(self, base: Scenario) -> None:
        self._base = base
        dumped = base.model_dump(mode="json", by_alias=True)
        self._keys = {
            name: field.serialization_alias or field.alias or name
            for name, field in Scenario.model_fields.items()
            if name != "seed"
        }
        self._order = sorted(self._keys, key=self._keys.__getitem__)
        self._seen: dict[tuple[str, int], tuple[object, str]] = {}
        self._label = {name: f"{_canonical(self._keys[name])}:" for name in self._order}
        self._text = {
            name: self._label[name] + _canonical(dumped[self._keys[name]]) for name in self._order
        }

    def __call__(self, scenario: Scenario) -> str:
        own, base = scenario.__dict__, self._base.__dict__
        parts = []
        for name in self._order:
            section = own[name]
            if section is base[name]:
                parts.append(self._text[name])
                continue
            known = self._seen.get((name, id(section)))
            if known is None or known[0] is not section:
                dumped = scenario.model_dump(mode="json", by_alias=True, include={name})
                text = self._label[name] + _canonical(dumped[self._keys[name]])
                if len(self._seen) >= _SEEN_SECTIONS:
                    self._seen.clear()
                known = self._seen[name, id(section)] = (section, text)
            parts.append(known[1])
        return _digest("{" + ",".join(parts) + "}")


_SEEN_SECTIONS = 4096
"""Sections other than the base's whose text a ``HashAgainstBase`` keeps (then it starts
again): scenarios that share a section object share its text, so a sweep's axis value is
serialized once."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
"""``json.dumps(value, sort_keys=True, separators=(",", ":"))`` without building an encoder
for each value."""


def _canonical(value: object) -> str:
    return _CANONICAL.encode(value)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_DIGITS]
