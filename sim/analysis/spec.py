"""A run's spec (``PRESET_OR_FILE[:TRANSPORT]``) and engine as the command line gives them.

Parsing them needs no engine, so a command refuses a bad one before the engines load.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from models.errors import ScenarioError
from sim.turn.transport_names import Transport


class Engine(StrEnum):
    """How a run is evaluated."""

    DES = "des"
    ANALYTIC = "analytic"


@dataclass(frozen=True)
class Spec:
    """``PRESET_OR_FILE[:TRANSPORT]`` as given on the command line."""

    text: str
    source: str
    transport: Transport


def parse_spec(text: str) -> Spec:
    """Split a spec; the transport defaults to ``http``."""
    source, sep, transport = text.rpartition(":")
    if not sep:
        source, transport = text, Transport.HTTP.value
    allowed = ", ".join(t.value for t in Transport)
    if transport not in {t.value for t in Transport}:
        raise ScenarioError(f"transport = {transport!r} in spec {text!r}: allowed: {allowed}")
    if not source:
        raise ScenarioError(f"spec = {text!r}: expected PRESET_OR_FILE[:TRANSPORT]")
    return Spec(text=text, source=source, transport=Transport(transport))


def parse_engine(text: str) -> Engine:
    if text not in {e.value for e in Engine}:
        allowed = ", ".join(e.value for e in Engine)
        raise ScenarioError(f"engine = {text!r}: allowed: {allowed}")
    return Engine(text)
