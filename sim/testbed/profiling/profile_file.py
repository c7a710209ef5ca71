"""A profile as TOML: scenario fields measured on this machine, each with its source.

``[inference]`` and ``[api]`` hold scenario fields (applied as overrides by
``testbed --engine real``); ``[sources]`` says for each how it was measured
(n, fit, R^2); ``[profile]`` describes the run (model, threads, load average)
and ``[measured]`` what was measured but is not a scenario field (the cost of
restoring a conversation's KV, the model's tokens per scenario token).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from models.errors import ScenarioError
from models.loading import validate
from models.scenario import Scenario

SECTIONS = ("inference", "api")
"""The scenario sections a profile sets."""


@dataclass(frozen=True)
class Profile:
    """Profiled scenario fields, their sources, and what describes the run."""

    fields: dict[str, dict[str, Any]]
    sources: dict[str, str]
    about: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)

    def apply(self, scenario: Scenario) -> Scenario:
        """``scenario`` with the profiled fields in place of its own."""
        data = scenario.model_dump(mode="json", by_alias=True)
        for section, values in self.fields.items():
            data[section].update(values)
        return validate(data)

    def to_toml(self) -> str:
        document = {
            "profile": self.about,
            **self.fields,
            "sources": self.sources,
            "measured": self.measured,
        }
        return tomli_w.dumps(document)

    def write(self, path: Path) -> None:
        path.write_text(self.to_toml())


def read_profile(path: Path) -> Profile:
    """Read a profile; a missing or malformed file is one line naming it."""
    try:
        document = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as problem:
        raise ScenarioError(f"--profile = {str(path)!r}: {problem}") from None
    unknown = set(document) - {*SECTIONS, "sources", "profile", "measured"}
    if unknown:
        raise ScenarioError(
            f"--profile = {str(path)!r}: unknown table {sorted(unknown)[0]!r}; allowed: "
            f"{', '.join((*SECTIONS, 'sources', 'profile', 'measured'))}"
        )
    return Profile(
        fields={section: dict(document.get(section, {})) for section in SECTIONS},
        sources=dict(document.get("sources", {})),
        about=dict(document.get("profile", {})),
        measured=dict(document.get("measured", {})),
    )
