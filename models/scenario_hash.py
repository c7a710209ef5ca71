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
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_DIGITS]
