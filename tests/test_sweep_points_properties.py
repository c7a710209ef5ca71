"""Random points against one ``Points`` per base: each is the point validated whole (equal,
with the same fields set in the scenario and in every section) and hashes alike, or is
refused with the whole validation's message and hashed as that message; values come
again (found among the validated sections) and as equal values of other types (1, 1.0,
True; 0.0 and -0.0)."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from models.loading import raw_scenario
from models.scenario import Scenario
from models.scenario_hash import HashAgainstBase, scenario_hash
from sim.sweep.fingerprint import point_hash
from sim.sweep.points import Points, point_scenario

BASES = ("codex-spark", "gpt5-flagship", "cline-multifile")

NUMBERS = st.sampled_from([0.0, -0.0, 1, 1.0, True, 0.3, 0.1 + 0.2, 65.0, 1e4, 2e9, -5.0])
"""Few values, so that they come again, of every type a number field meets (and refuses)."""

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "inference.decode_tps": st.one_of(
        NUMBERS,
        st.floats(min_value=0.1, max_value=1e4),
        st.fixed_dictionaries(
            {
                "kind": st.just("lognormal"),
                "median": st.sampled_from([50.0, 900.0]),
                "sigma": NUMBERS,
            }
        ),
    ),
    "inference.overhead_ms": NUMBERS,
    "inference.prefix_cache_hit_fraction": st.one_of(NUMBERS, st.floats(0.0, 1.0)),
    "inference.hardware": st.sampled_from(
        ["gpu-flagship", "gpu-midrange", "cerebras-class", "tpu"]
    ),
    "inference.prefill_ms_per_token_per_1k_context_tokens": NUMBERS,
    "inference.prefix_reuse_needs_state": st.sampled_from([True, False, 1, "yes"]),
    "api.route_ms": NUMBERS,
    "api.route_cached_ms": NUMBERS,
    "api.config_cache": st.sampled_from([True, False, 0]),
    "network.rtt_ms": st.one_of(NUMBERS, st.floats(0.0, 500.0)),
    "workload.tool_calls_per_rollout": st.sampled_from([1, 12, 12.0, 0, True]),
    "compaction.threshold_tokens": NUMBERS,
    "seed": st.sampled_from([0, 7, 7.0, -1]),
    "name": st.sampled_from(["renamed", ""]),
}

ASSIGNMENTS = st.dictionaries(
    st.sampled_from(sorted(VALUES)), st.none(), min_size=1, max_size=3
).flatmap(lambda chosen: st.fixed_dictionaries({path: VALUES[path] for path in chosen}))


@functools.cache
def points_of(base: str) -> Points:
    """One ``Points`` per base, kept across examples so that its sections are found again."""
    return Points(raw_scenario(base))


def assert_same_sections(fast: Scenario, whole: Scenario) -> None:
    assert fast == whole
    assert fast.model_fields_set == whole.model_fields_set
    for name in Scenario.model_fields:
        section = getattr(whole, name)
        if hasattr(section, "model_fields_set"):
            assert getattr(fast, name).model_fields_set == section.model_fields_set, name


@settings(max_examples=300, derandomize=True, deadline=None)
@given(base=st.sampled_from(BASES), assignments=ASSIGNMENTS)
def test_random_points_are_validated_and_hashed_as_whole(
    base: str, assignments: dict[str, Any]
) -> None:
    points = points_of(base)
    raw = points.base_raw
    try:
        whole = point_scenario(raw, assignments)
    except Exception as error:
        try:
            points.scenario(assignments)
        except Exception as refused:
            assert type(refused) is type(error)
            assert str(refused) == str(error)
        else:
            raise AssertionError(f"{assignments} validated, refused whole: {error}") from None
        assert point_hash(raw, assignments, points=points) == point_hash(raw, assignments)
        return
    fast = points.scenario(assignments)
    assert_same_sections(fast, whole)
    assert points.hash(fast) == scenario_hash(whole)
    assert point_hash(raw, assignments, points=points) == point_hash(raw, assignments)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(base=st.sampled_from(BASES), assignments=ASSIGNMENTS)
def test_hash_against_base_of_any_scenario_is_its_hash(
    base: str, assignments: dict[str, Any]
) -> None:
    """Scenarios that share no section object with the base (validated whole) and those
    that share all but one: ``HashAgainstBase`` gives ``scenario_hash`` either way."""
    points = points_of(base)
    assert points.base is not None
    hashed = HashAgainstBase(points.base)
    try:
        whole = point_scenario(points.base_raw, assignments)
    except Exception:
        return
    assert hashed(whole) == scenario_hash(whole)
    assert hashed(points.base) == scenario_hash(points.base)
    assert hashed(points.scenario(assignments)) == scenario_hash(whole)
