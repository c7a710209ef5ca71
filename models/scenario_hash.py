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
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return _digest(text)


class HashAgainstBase:
    """``scenario_hash`` of scenarios that share most sections with one ``base``: a section
    that is the base's own object is not serialized again (a sweep's points)."""

    def __init__(self, base: Scenario) -> None:
        self._base = base
        dumped = base.model_dump(mode="json", by_alias=True)
        self._keys = {
            name: field.serialization_alias or field.alias or name
            for name, field in Scenario.model_fields.items()
            if name != "seed"
        }
        self._order = sorted(self._keys, key=self._keys.__getitem__)
        self._text = {
            name: f"{json.dumps(self._keys[name])}:{_canonical(dumped[self._keys[name]])}"
            for name in self._order
        }

    def __call__(self, scenario: Scenario) -> str:
        own, base = scenario.__dict__, self._base.__dict__
        parts = []
        for name in self._order:
            text = self._text[name]
            if own[name] is not base[name]:
                dumped = scenario.model_dump(mode="json", by_alias=True, include={name})
                text = f"{json.dumps(self._keys[name])}:{_canonical(dumped[self._keys[name]])}"
            parts.append(text)
        return _digest("{" + ",".join(parts) + "}")


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_DIGITS]
