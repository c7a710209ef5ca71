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


def assert_one_line_error(result: CliResult, *mentions: str) -> None:
    """Exit code 2, nothing on stdout, one ``error:`` line naming what was wrong."""
    assert result.exit_code == 2, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.stderr
    for mention in mentions:
        assert mention in lines[0], (mention, lines[0])
