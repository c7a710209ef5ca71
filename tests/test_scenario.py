"""The scenario tree: documented fields with units, presets, overrides and ``extends``."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from support import CORE_PRESETS, scenario

from models.distributions import Constant, Empirical
from models.errors import ScenarioError
from models.hardware import hardware_registry
from models.loading import load_scenario, preset_names
from models.scenario import Scenario

UNIT_SUFFIXES = (
    "_s",
    "_ms",
    "_tps",
    "_tokens",
    "_bytes",
    "_per_s",
    "_per_hour",
    "_per_minute",
    "_per_token",
    "_per_turn",
    "_per_rollout",
    "_per_stream",
    "_per_replica",
    "_prob",
    "_fraction",
)
"""Suffixes that name a unit (time, rate, size, or a probability or fraction)."""

COUNT_NAMES = (
    "_rtts",
    "_hops",
    "_workers",
    "_slots",
    "_replicas",
    "_retries",
    "agents",
    "replications",
    "organizations",
)
"""Name endings of counts whose unit is the thing counted (round trips, hops, workers...)."""

UNITLESS = frozenset(
    {
        *("name", "description", "seed", "hardware", "store", "config_cache", "tools"),
        *("weight", "kind", "residency", "eviction", "http_routing", "ws_routing"),
        "tool_starts_on_call_item",
        "reuse_across_rollouts",
        "prefix_reuse_needs_state",
    }
)
"""Fields without a unit: labels, flags, the seed, a tool list, relative weights and
policies."""


def documented_fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    """Every leaf field of the tree with its dotted path; sections are walked, not yielded."""
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        if _is_model(info.annotation):
            yield from documented_fields(info.annotation, f"{path}.")
            continue
        yield path, info
        if typing.get_origin(info.annotation) is tuple:
            item = typing.get_args(info.annotation)[0]
            if _is_model(item):
                yield from documented_fields(item, f"{path}[].")


def _is_model(annotation: object) -> typing.TypeGuard[type[BaseModel]]:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


FIELDS = dict(documented_fields(Scenario))


def test_the_tree_is_walked() -> None:
    assert "network.rtt_ms" in FIELDS
    assert "workload.tools[].time_s" in FIELDS
    assert len(FIELDS) > 60


@pytest.mark.parametrize("path", FIELDS)
def test_every_field_has_a_description_and_a_source(path: str) -> None:
    info = FIELDS[path]
    assert info.description and len(info.description) > 3, path
    extra = info.json_schema_extra
    assert isinstance(extra, dict) and extra.get("source"), path


@pytest.mark.parametrize("path", FIELDS)
def test_every_field_names_its_unit(path: str) -> None:
    name = path.rsplit(".", 1)[-1]
    assert name in UNITLESS or name.endswith(UNIT_SUFFIXES + COUNT_NAMES), path


def test_every_section_is_documented() -> None:
    sections = [info.annotation for info in Scenario.model_fields.values()]
    for section in filter(_is_model, sections):
        assert section.__doc__ and section.__doc__.strip(), section


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_validates(name: str) -> None:
    loaded = scenario(name)
    assert loaded.name == name
    assert loaded.workload.tool_calls_per_rollout.mean >= 1


def test_the_core_presets_are_shipped() -> None:
    assert set(CORE_PRESETS) <= set(preset_names())


def test_hardware_registry_has_the_required_profiles() -> None:
    registry = hardware_registry()
    assert {"gpu-flagship", "cerebras-class"} <= set(registry)
    assert len(registry) >= 3
    for entry in registry.values():
        assert entry.source and entry.description
    # FACTS: about 65 tokens/s through the API; 1,000 tokens/s sustained, bursts toward 4,000.
    assert registry["gpu-flagship"].decode_tps.mean == pytest.approx(65, rel=0.05)
    assert registry["cerebras-class"].decode_tps.mean >= 1000
    assert registry["cerebras-class"].decode_tps.survival(2000) > 0
    assert registry["cerebras-class"].decode_tps.survival(4000) < 1e-9


def test_inference_inherits_the_hardware_profile_and_keeps_overrides() -> None:
    flagship = scenario("gpt5-flagship").inference
    profile = hardware_registry()["gpu-flagship"]
    assert flagship.prefill_tps == profile.prefill_tps
    assert flagship.decode_tps == profile.decode_tps
    changed = scenario("gpt5-flagship", "inference.prefill_tps=1234").inference
    assert changed.prefill_tps == 1234
    assert changed.overhead_ms == profile.overhead_ms


def test_extends_merges_tables_key_by_key() -> None:
    base, child = scenario("codex-spark"), scenario("responses-2025")
    assert child.api.render_cache_hit_prob == 0.0
    assert child.api.config_cache is False
    assert child.api.intermediate_hops > 0
    assert child.api.validate_fixed_ms == base.api.validate_fixed_ms
    assert child.workload == base.workload
    assert child.inference == base.inference


def test_overrides_set_numbers_distributions_and_list_items() -> None:
    changed = scenario(
        "codex-spark",
        "network.rtt_ms=80",
        "workload.tool_calls_per_rollout=12",
        "workload.tools[1].weight=2.5",
        'workload.output_tokens={kind="lognormal", median=90, sigma=0.2}',
        "connection.store=false",
    )
    assert changed.network.rtt_ms == 80
    assert changed.workload.tool_calls_per_rollout == Constant(value=12)
    assert changed.workload.tools[1].weight == 2.5
    assert changed.workload.output_tokens.median == 90
    assert changed.connection.store is False
    assert isinstance(scenario("codex-spark").workload.tool_calls_per_rollout, Empirical)


def test_a_file_can_extend_a_preset(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('extends = "codex-spark"\nname = "mine"\n[network]\nrtt_ms = 120.0\n')
    mine = load_scenario(str(path))
    assert mine.name == "mine"
    assert mine.network.rtt_ms == 120.0
    assert mine.network.tcp_handshake_rtts == scenario("codex-spark").network.tcp_handshake_rtts


def test_scenarios_are_immutable() -> None:
    loaded = scenario("codex-spark")
    with pytest.raises(ValidationError):
        loaded.network.rtt_ms = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("api.route_cached_ms=100", "must be <= api.route_ms"),
        ("workload.tool_calls_per_rollout=2.5", "integer-valued"),
        ('inference.decode_tps={kind="exponential", mean=100}', "E[1/rate] finite"),
        ("api.render_cache_hit_prob=1.5", "less than or equal to 1"),
        ("workload.tools[7].weight=1", "index outside 0..3"),
    ],
)
def test_invalid_scenarios_raise_one_line_errors(override: str, fragment: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(fragment)) as caught:
        load_scenario("codex-spark", [override])
    assert "\n" not in str(caught.value)
