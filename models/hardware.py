"""Hardware profiles as data: an explicit registry loaded from hardware.toml."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from models.distributions import Distribution
from models.strict import Float


class HardwareProfile(BaseModel):
    """Prefill rate, decode rate (a distribution), fixed overhead of one request, KV memory."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    prefill_tps: Float = Field(gt=0, description="prompt tokens per second")
    decode_tps: Distribution = Field(description="output tokens per second, drawn per turn")
    overhead_ms: Float = Field(ge=0, description="fixed inference overhead per request")
    kv_memory_bytes: Float = Field(
        gt=0, description="accelerator memory per replica left for KV after weights"
    )
    kv_bytes_per_token: Float = Field(gt=0, description="bytes of keys and values per token")


class HardwareEntry(HardwareProfile):
    """A registry entry: the profile plus what it stands for and where it comes from."""

    description: str
    source: str

    def profile(self) -> HardwareProfile:
        return HardwareProfile(**self.model_dump(include=set(HardwareProfile.model_fields)))


@cache
def hardware_registry() -> dict[str, HardwareEntry]:
    """Name -> documented profile, from the packaged hardware.toml."""
    raw = tomllib.loads((Path(__file__).parent / "hardware.toml").read_text())
    return {name: HardwareEntry(**table) for name, table in raw.items()}


@cache
def hardware_profiles() -> dict[str, HardwareProfile]:
    """Name -> profile fields only (what a scenario's inference section inherits).

    Cached: every scenario validation reads it. Treat the dict as read-only.
    """
    return {name: entry.profile() for name, entry in hardware_registry().items()}


def profile_fields(profile: HardwareProfile) -> dict[str, Any]:
    """``profile.model_dump()``, dumped once per profile object: every validation of an
    inference section that names its hardware reads it. Treat the dict as read-only."""
    known = _DUMPED.get(id(profile))
    if known is None or known[0] is not profile:
        if len(_DUMPED) >= _DUMPED_PROFILES:
            _DUMPED.clear()
        known = _DUMPED[id(profile)] = (profile, profile.model_dump())
    return known[1]


_DUMPED_PROFILES = 64
"""Profiles whose fields ``profile_fields`` keeps (the registry's, and any a test builds)."""
_DUMPED: dict[int, tuple[HardwareProfile, dict[str, Any]]] = {}
