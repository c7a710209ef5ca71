"""A sweep's points validated and hashed against its base: the same scenarios and hashes as
each point validated whole, whatever its assignments touch, and the same memory batches."""

from __future__ import annotations

from typing import Any

import pytest

from models.loading import raw_scenario
from models.scenario_hash import scenario_hash
from sim.analysis.estimates import analytic_batch_bytes
from sim.sweep.points import Points, point_scenario
from sim.sweep.tasks import memory_batches

ASSIGNMENTS: list[dict[str, Any]] = [
    {},
    {"inference.decode_tps": 30.0},
    {"inference.decode_tps": 0.1 + 0.2},
    {"inference.decode_tps": 1000},
    {"inference.decode_tps": {"kind": "lognormal", "median": 900.0, "sigma": 0.4}},
    {"inference.decode_tps": 1000.0, "inference.overhead_ms": 12.5},
    {"inference.overhead_ms": 0.0},
    {"inference.overhead_ms": -0.0},
    {"inference.hardware": "gpu-flagship"},
    {"inference.hardware": "gpu-flagship", "inference.decode_tps": 80.0},
    {"network.rtt_ms": 45.0, "api.route_ms": 9.0},
    {"workload.tool_calls_per_rollout": 12},
    {"workload.tools[0].weight": 3.0},
    {"seed": 7},
    {"seed": 7, "name": "renamed", "inference.decode_tps": 65.0},
    {"compaction.threshold_tokens": 1.0},
    {"api.route_cached_ms": 1e4},
    {"inference.decode_tps": 0.0},
    {"inference.no_such_field": 1.0},
    {"no_such_section.x": 1.0},
    {"inference.decode_tps.value": 5.0},
]


@pytest.mark.parametrize("base", ["codex-spark", "gpt5-flagship", "cline-multifile"])
def test_points_are_the_points_validated_whole_and_hash_alike(base: str) -> None:
    """Fields set alone, several in a section, a hardware profile that fills others, nested
    paths, the seed, refused values and unknown paths: a point from ``Points`` is the point
    validated whole (fields set included) or raises its error, and hashes alike, also when
    the same section value comes again."""
    raw = raw_scenario(base)
    points = Points(raw)
    for _ in range(2):
        for assignments in ASSIGNMENTS:
            try:
                whole = point_scenario(raw, assignments)
            except Exception as error:
                with pytest.raises(type(error)) as raised:
                    points.scenario(assignments)
                assert str(raised.value) == str(error)
                continue
            fast = points.scenario(assignments)
            assert fast == whole
            assert fast.model_fields_set == whole.model_fields_set
            assert points.hash(fast) == scenario_hash(whole), assignments


def test_zero_and_negative_zero_are_hashed_apart() -> None:
    """The canonical text keeps the sign of zero, so must the cache of validated sections."""
    points = Points(raw_scenario("codex-spark"))
    positive = points.scenario({"inference.overhead_ms": 0.0})
    negative = points.scenario({"inference.overhead_ms": -0.0})
    assert points.hash(positive) == scenario_hash(positive)
    assert points.hash(negative) == scenario_hash(negative)
    assert points.hash(positive) != points.hash(negative)


def assert_filled_in_order(batches: list[list[int]], lengths: list[int], budget: float) -> None:
    """Adding points one by one while the batch, padded to its longest rollout, fits: the
    batches take every point in order, each fits (or holds one point), and none could
    have taken the next point (the memory grows with the points and the longest)."""
    assert [index for batch in batches for index in batch] == list(range(len(lengths)))
    for batch, following in zip(batches, [*batches[1:], None], strict=True):
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or analytic_batch_bytes(len(batch), longest) <= budget
        if following is not None:
            grown = max(longest, lengths[following[0]])
            assert analytic_batch_bytes(len(batch) + 1, grown) > budget


@pytest.mark.parametrize("memory_mb", ["1", "40", "64", "2048"])
@pytest.mark.parametrize("calls", [[12] * 300, [12] * 100 + [80] * 50 + [12] * 100, [200] * 7])
def test_memory_batches_add_points_while_they_fit(
    memory_mb: str, calls: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from models.limits import MEMORY
    from sim.analysis.estimates import longest_rollout_turns

    monkeypatch.setenv(MEMORY.env, memory_mb)
    points = Points(raw_scenario("codex-spark"))
    by_calls = {n: points.scenario({"workload.tool_calls_per_rollout": n}) for n in set(calls)}
    scenarios = [by_calls[n] for n in calls]
    lengths = [longest_rollout_turns(s) for s in scenarios]
    assert_filled_in_order(memory_batches(scenarios), lengths, MEMORY.limit())
