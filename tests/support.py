"""Helpers shared by the test modules: the core presets and a scenario cache."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from models.loading import load_scenario
from models.scenario import Scenario

CORE_PRESETS = ("codex-spark", "gpt5-flagship", "responses-2025")
"""The presets of the core simulator (single agent, no contention)."""


@cache
def scenario(source: str, *overrides: str) -> Scenario:
    """A validated scenario, loaded once per distinct (source, overrides)."""
    return load_scenario(source, overrides)


@dataclass(frozen=True)
class CliResult:
    """What one ``loopbudget`` invocation produced."""

    exit_code: int
    stdout: str
    stderr: str
