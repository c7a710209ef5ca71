"""The Codex reader: the real Codex fixture against an independent reading, and the fields
of newer Codex lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_lines import FIXTURE, codex_line

from sim.traces.read import read_requests, read_rollouts
from sim.traces.report import ReadReport


def independent_reading(path: Path) -> dict:
    """A plain pass: a request per new cumulative usage, calls and outputs by call_id."""
    from datetime import datetime

    def at(line: dict) -> float:
        return datetime.fromisoformat(line["timestamp"].replace("Z", "+00:00")).timestamp()

    usages, last_total, calls, outputs = [], None, {}, {}
    for raw in path.read_text().splitlines():
        line = json.loads(raw)
        payload = line["payload"]
        if line["type"] == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if info and info["total_token_usage"] != last_total:
                last_total = info["total_token_usage"]
                usages.append(info["last_token_usage"])
        if line["type"] == "response_item":
            if payload["type"] in ("function_call", "custom_tool_call"):
                calls[payload["call_id"]] = (payload["name"], at(line))
            if payload["type"] in ("function_call_output", "custom_tool_call_output"):
                outputs[payload["call_id"]] = at(line)
    durations = {cid: outputs[cid] - start for cid, (_, start) in calls.items()}
    return {"usages": usages, "calls": calls, "durations": durations}


def test_the_codex_fixture_reads_to_the_counts_of_an_independent_reading() -> None:
    truth = independent_reading(FIXTURE)
    report = ReadReport(str(FIXTURE))
    rollouts = list(read_rollouts(FIXTURE, report))
    requests = [r for rollout in rollouts for r in rollout]
    assert report.format == "codex-rollout"
    assert len(requests) == len(truth["usages"]) == 7
    assert len(rollouts) == 2
    for request, usage in zip(requests, truth["usages"], strict=True):
        assert request.input_tokens == usage["input_tokens"]
        assert request.cached_input_tokens == usage["cached_input_tokens"]
        assert request.output_tokens == usage["output_tokens"]
        assert request.reasoning_tokens == usage["reasoning_output_tokens"]
    calls = {c.call_id: c for r in requests for c in r.tool_calls}
    assert set(calls) == set(truth["calls"])
    for call_id, call in calls.items():
        assert call.tool_name == truth["calls"][call_id][0]
        assert call.duration_s == pytest.approx(truth["durations"][call_id], abs=1e-6)
    assert report.malformed == {} and report.warnings == {}
    assert all(r.end_s >= r.start_s for r in requests)


def test_newer_codex_lines_give_response_ids_and_the_tools_own_times(tmp_path: Path) -> None:
    usage = {
        "input_tokens": 500,
        "cached_input_tokens": 100,
        "output_tokens": 40,
        "reasoning_output_tokens": 8,
        "total_tokens": 540,
    }
    lines = [
        codex_line(
            "session_meta", {"id": "s1", "cli_version": "0.120.0"}, "2026-03-01T10:00:00.000Z"
        ),
        codex_line(
            "event_msg", {"type": "user_message", "message": "fix"}, "2026-03-01T10:00:00.000Z"
        ),
        codex_line("turn_context", {"model": "gpt-5.3-codex"}, "2026-03-01T10:00:00.010Z"),
        codex_line(
            "response_item",
            {"type": "function_call", "name": "exec_command", "call_id": "c1", "arguments": "{}"},
            "2026-03-01T10:00:01.000Z",
        ),
        codex_line(
            "token_usage_record",
            {"response_id": "resp_1", "usage": usage},
            "2026-03-01T10:00:01.020Z",
        ),
        codex_line(
            "event_msg",
            {
                "type": "item_completed",
                "started_at_ms": 1772359201100,
                "completed_at_ms": 1772359203600,
                "item": {"type": "CommandExecution", "id": "c1"},
            },
            "2026-03-01T10:00:03.700Z",
        ),
        codex_line(
            "response_item",
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            "2026-03-01T10:00:03.700Z",
        ),
        codex_line(
            "token_usage_record",
            {"response_id": "resp_2", "usage": usage},
            "2026-03-01T10:00:04.500Z",
        ),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    requests, _ = read_requests([path])
    assert [r.response_id for r in requests] == ["resp_1", "resp_2"]
    (call,) = requests[0].tool_calls
    assert call.tool_name == "exec_command"
    assert call.duration_s == pytest.approx(2.5)
    assert requests[1].start_s == pytest.approx(1772359203.7)
    assert requests[0].model == "gpt-5.3-codex"
