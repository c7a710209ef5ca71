"""Scenarios in and out of the dashboard as TOML, with the command line's error messages."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import tomli_w

from models.errors import ScenarioError
from models.loading import raw_scenario, validate
from models.scenario import Scenario

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def scenario_toml(scenario: Scenario) -> str:
    """Every field of ``scenario`` as TOML (what ``loopbudget show --resolved`` prints)."""
    return tomli_w.dumps(scenario.model_dump(mode="json", by_alias=True))


def scenario_from_upload(file_name: str, content: bytes) -> Scenario:
    """Validate an uploaded TOML file exactly as ``loopbudget run FILE`` would.

    ``extends`` may name a preset.  Raises a one-line ScenarioError naming the
    file or field, the value and what is allowed.
    """
    name = _UNSAFE.sub("_", Path(file_name).name) or "scenario"
    if not name.endswith(".toml"):
        name += ".toml"
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioError(
            f"{name}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None
    with tempfile.TemporaryDirectory(prefix="loopbudget-upload-") as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        try:
            return validate(raw_scenario(str(path)))
        except ScenarioError as error:
            raise ScenarioError(str(error).replace(f"{folder}/", "")) from None
