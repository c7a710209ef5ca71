"""``--trace FILE``: Chrome trace events whose spans tile each simulated rollout."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from support import CliResult

from models.stages import STAGES, Side, Stage

Cli = Callable[..., CliResult]
ROLLOUTS = 4
TOLERANCE_US = 1e-3
"""Span edges are computed in seconds and written in microseconds: a nanosecond of slack."""


@pytest.fixture
def traced(cli: Cli, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(trace, compare JSON) of http vs ws on codex-spark, a few rollouts."""
    path = tmp_path / "trace.json"
    result = cli(
        "compare",
        "codex-spark:http",
        "codex-spark:ws",
        "-n",
        str(ROLLOUTS),
        "--trace",
        str(path),
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    return json.loads(path.read_text()), json.loads(result.stdout)


def spans(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in trace["traceEvents"] if event["ph"] == "X"]


def critical_path(trace: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """Per process (one rollout), its spans on the critical path in time order."""
    by_rollout: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for span in spans(trace):
        if not span["args"].get("overlapped"):
            by_rollout[span["pid"]].append(span)
    return {pid: sorted(rows, key=lambda s: s["ts"]) for pid, rows in by_rollout.items()}


def test_trace_is_chrome_trace_json_whose_spans_add_up_to_the_budget(
    traced: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Per side and stage, the critical-path spans of the traced rollouts sum to the
    rollouts times the stage's ``budget_s`` of ``compare --json``."""
    trace, summary = traced
    stage_names = {stage.value for stage in STAGES}
    total_us: dict[tuple[str, str], float] = defaultdict(float)
    for span in spans(trace):
        assert span["name"] in stage_names
        assert span["dur"] >= 0
        assert span["ts"] >= -TOLERANCE_US
        assert {"pid", "tid", "ts", "dur", "args"} <= set(span)
        if not span["args"].get("overlapped"):
            total_us[("a" if span["pid"] < 1_000_000 else "b", span["name"])] += span["dur"]
    for side in ("a", "b"):
        for stage, seconds in summary[side]["budget_s"].items():
            traced_s = total_us[(side, stage)] / 1e6 / ROLLOUTS
            assert traced_s == pytest.approx(seconds, rel=1e-9, abs=1e-9), (side, stage)


def test_one_thread_per_stage_in_every_process(
    traced: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    trace, _ = traced
    threads: dict[int, dict[int, str]] = defaultdict(dict)
    for event in trace["traceEvents"]:
        if event["ph"] == "M" and event["name"] == "thread_name":
            threads[event["pid"]][event["tid"]] = event["args"]["name"]
    assert len(threads) == 2 * ROLLOUTS, "both sides, each rollout its own process"
    for names in threads.values():
        assert sorted(names.values()) == sorted(stage.value for stage in STAGES)
    for span in spans(trace):
        assert threads[span["pid"]][span["tid"]] == span["name"]


def test_spans_tile_each_rollout_and_end_at_its_end_to_end_time(
    traced: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    trace, summary = traced
    ends_s: dict[str, list[float]] = {"a": [], "b": []}
    for pid, path in critical_path(trace).items():
        assert path[0]["ts"] == pytest.approx(0.0, abs=TOLERANCE_US)
        for before, after in pairwise(path):
            assert after["ts"] == pytest.approx(before["ts"] + before["dur"], abs=TOLERANCE_US)
        side = "a" if pid < 1_000_000 else "b"
        ends_s[side].append((path[-1]["ts"] + path[-1]["dur"]) / 1e6)
    for side in ("a", "b"):
        mean_end_s = sum(ends_s[side]) / ROLLOUTS
        assert mean_end_s == pytest.approx(summary[side]["e2e_s"]["mean"], rel=1e-9)


def test_each_turn_runs_its_stages_in_order(
    traced: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    trace, _ = traced
    order = {stage.value: index for index, stage in enumerate(STAGES)}
    for path in critical_path(trace).values():
        by_turn: dict[int, list[int]] = defaultdict(list)
        for span in path:
            by_turn[span["args"]["turn"]].append(order[span["name"]])
        assert list(by_turn) == sorted(by_turn), "turns follow each other"
        for stages in by_turn.values():
            assert stages == sorted(stages)


def test_overlapped_post_work_is_drawn_off_the_critical_path(
    traced: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    trace, _ = traced
    overlapped = [s for s in spans(trace) if s["args"].get("side") == "overlapped_post"]
    assert overlapped, "WebSocket post-inference work is overlapped"
    assert all(s["name"] == Stage.POST.value and s["args"]["overlapped"] for s in overlapped)
    assert all(s["pid"] >= 1_000_000 for s in overlapped), "only side b (ws) overlaps"
    parallel = [s for s in spans(trace) if s["args"].get("side") == "parallel_safety"]
    assert {s["name"] for s in parallel} == {Stage.SAFETY.value}, "parallel classifiers"
    assert {s["pid"] >= 1_000_000 for s in parallel} == {False, True}, "on both transports"
    blocking_post = [
        s for s in spans(trace) if s["name"] == Stage.POST.value and not s["args"].get("overlapped")
    ]
    assert blocking_post and all(s["pid"] < 1_000_000 for s in blocking_post)


def test_a_fleet_trace_shows_queue_waits_before_the_stage_that_takes_the_pool(
    cli: Cli, tmp_path: Path
) -> None:
    """A contended fleet (4 safety workers for 60 HTTP agents): the traced sample of
    rollouts still tiles the critical path, and every wait is a queue span right before
    the first stage that holds its pool (stage table), named by that pool, or, for the
    parallel classifiers (side table), right before the stage the turn waits for them."""
    path = tmp_path / "fleet.json"
    result = cli(
        "run",
        "codex-spark:http",
        *("--set", "load.agents=60", "--set", "load.warmup_s=30"),
        *("--set", "load.duration_s=30", "--set", "capacity.safety_workers=4"),
        *("--trace", str(path)),
    )
    assert result.exit_code == 0, result.stderr
    trace = json.loads(path.read_text())
    paths = critical_path(trace)
    assert 0 < len(paths) <= 20, "a sample of the first replication's measured rollouts"
    waits = 0
    for path_spans in paths.values():
        assert path_spans[0]["ts"] == pytest.approx(0.0, abs=TOLERANCE_US)
        for before, after in pairwise(path_spans):
            assert after["ts"] == pytest.approx(before["ts"] + before["dur"], abs=TOLERANCE_US)
            if before["name"] == Stage.QUEUE.value:
                waits += 1
                if "side" in before["args"]:
                    side = Side(before["args"]["side"])
                    assert side.info.joined_before == after["name"]
                    assert side.info.pool == before["args"]["pool"]
                else:
                    assert Stage(after["name"]).pool == before["args"]["pool"]
    assert waits > 0, "four safety workers make HTTP turns wait"
    pools = {s["args"]["pool"] for s in spans(trace) if s["name"] == Stage.QUEUE.value}
    assert "safety" in pools
