"""Scenarios in and out of the dashboard as TOML, with the command line's error messages."""

from __future__ import annotations

import re
from pathlib import Path

import tomli_w

from models.errors import ScenarioError
from models.limits import INPUT_SIZE
from models.loading import raw_scenario_text, validate
from models.scenario import Scenario
from models.text_input import decode_utf8
from sim.analysis.estimates import check_rollout_length

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def scenario_toml(scenario: Scenario) -> str:
    """Every field of ``scenario`` as TOML (what ``loopbudget show --resolved`` prints)."""
    return tomli_w.dumps(scenario.model_dump(mode="json", by_alias=True))


def scenario_from_upload(file_name: str, content: bytes) -> Scenario:
    """Validate an uploaded TOML file as ``loopbudget run FILE`` would, reading nothing else.

    ``extends`` may name a preset, never a file: the upload comes from another
    machine, so no path in it means anything here.  Raises a one-line
    ScenarioError naming the file or field, the value and what is allowed.
    """
    name = _UNSAFE.sub("_", Path(file_name).name) or "scenario"
    if not name.endswith(".toml"):
        name += ".toml"
    limit = INPUT_SIZE.limit()
    if len(content) > limit:
        raise ScenarioError(
            f"{name}: larger than the {INPUT_SIZE.what} cap of "
            f"{limit / INPUT_SIZE.scale:g} {INPUT_SIZE.unit}"
        )
    text = decode_utf8(content, name)
    scenario = validate(raw_scenario_text(text, name))
    check_rollout_length(name, scenario)
    return scenario
