"""The trace readers: the real Codex fixture against an independent reading, every format's
fields, and bad traces counted or refused with one line."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from sim.report.otel import write_otlp
from sim.traces.agents_sdk import JsonlTracingProcessor
from sim.traces.read import detect, read_requests, read_rollouts
from sim.traces.report import ReadReport, TraceError
from sim.traces.table import Request, ToolCall

FIXTURE = Path(__file__).resolve().parent / "data" / "traces" / "codex-0.66-session.jsonl"


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


def codex_line(kind: str, payload: dict, at: str) -> str:
    return json.dumps({"timestamp": at, "type": kind, "payload": payload})


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


def otlp_span(name: str, attributes: dict, start_ns: int, end_ns: int, parent: str = "") -> dict:
    def value(v: object) -> dict:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        return {"stringValue": v}

    span = {
        "traceId": "ab" * 16,
        "spanId": format(hash(name) & 0xFFFFFFFF, "016x"),
        "name": name,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(end_ns),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }
    if parent:
        span["parentSpanId"] = parent
    return span


@pytest.mark.parametrize(
    ("names", "expected_cached"),
    [
        (
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.usage.input_tokens": 900,
                "gen_ai.usage.output_tokens": 70,
            },
            None,
        ),
        (
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.prompt_tokens": 900,
                "gen_ai.usage.completion_tokens": 70,
            },
            None,
        ),
        (
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.usage.input_tokens": 900,
                "gen_ai.usage.output_tokens": 70,
                "gen_ai.usage.cache_read.input_tokens": 600,
                "gen_ai.response.time_to_first_chunk": 0.2,
            },
            600,
        ),
        (
            {
                "openinference.span.kind": "LLM",
                "llm.token_count.prompt": 900,
                "llm.token_count.completion": 70,
                "llm.token_count.prompt_details.cache_read": 600,
                "session.id": "conv-1",
            },
            600,
        ),
    ],
    ids=["v1.36", "older", "latest", "openinference"],
)
def test_otlp_spans_of_each_attribute_generation(
    tmp_path: Path, names: dict, expected_cached: int | None
) -> None:
    t0 = 1_770_000_000_000_000_000
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "read_file",
        "gen_ai.tool.call.id": "call_9",
    }
    if "openinference.span.kind" in names:
        tool = {"openinference.span.kind": "TOOL", "tool.name": "read_file", "session.id": "conv-1"}
    spans = [
        otlp_span("chat gpt", names, t0, t0 + 800_000_000),
        otlp_span("execute_tool read_file", tool, t0 + 810_000_000, t0 + 1_310_000_000),
        otlp_span("chat gpt 2", names, t0 + 1_320_000_000, t0 + 2_000_000_000),
    ]
    document = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}
    path = tmp_path / "otlp.json"
    path.write_text(json.dumps(document) + "\n")
    assert detect(path) == "otlp-json"
    requests, _ = read_requests([path])
    assert len(requests) == 2
    first = requests[0]
    assert (first.input_tokens, first.output_tokens) == (900, 70)
    assert first.cached_input_tokens == expected_cached
    assert first.duration_s == pytest.approx(0.8)
    (call,) = first.tool_calls
    assert call.tool_name == "read_file" and call.duration_s == pytest.approx(0.5)
    assert requests[1].tool_calls == ()
    if "gen_ai.response.time_to_first_chunk" in names:
        assert first.ttft_s == pytest.approx(0.2)


def test_the_projects_own_otel_output_reads_back_to_the_same_rows(tmp_path: Path) -> None:
    requests = [
        Request(
            "r/0",
            i,
            100.0 + i,
            100.5 + i,
            transport="http",
            first_output_s=100.1 + i,
            input_tokens=1000 + i,
            cached_input_tokens=500,
            output_tokens=50,
            connection_id="c",
            connection_reused=i > 0,
            server_processing_ms=123.0,
            tool_calls=(ToolCall(f"call{i}", "edit", 100.5 + i, 100.9 + i),) if i < 2 else (),
        )
        for i in range(3)
    ]
    path = tmp_path / "own.jsonl"
    write_otlp(path, [requests])
    (back,) = list(read_rollouts(path))
    assert [r.format for r in back] == ["loopbudget-otlp"] * 3
    for original, read in zip(requests, back, strict=True):
        assert read.input_tokens == original.input_tokens
        assert read.transport == "http" and read.server_processing_ms == 123.0
        assert read.connection_reused == original.connection_reused
        assert read.ttft_s == pytest.approx(original.ttft_s, abs=1e-6)
        assert [c.call_id for c in read.tool_calls] == [c.call_id for c in original.tool_calls]


def test_the_agents_sdk_processor_writes_what_the_reader_reads(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    processor = JsonlTracingProcessor(path)

    def span(span_id: str, data: dict, start: str, end: str) -> SimpleNamespace:
        exported = {
            "object": "trace.span",
            "id": span_id,
            "trace_id": "trace_1",
            "parent_id": "agent",
            "started_at": start,
            "ended_at": end,
            "span_data": data,
            "error": None,
        }
        return SimpleNamespace(export=lambda: exported)

    usage = {
        "input_tokens": 1200,
        "output_tokens": 90,
        "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens_details": {"reasoning_tokens": 32},
    }
    processor.on_span_end(
        span(
            "s1",
            {"type": "response", "response_id": "resp_a", "usage": usage},
            "2026-01-05T10:00:00.000+00:00",
            "2026-01-05T10:00:01.500+00:00",
        )
    )
    processor.on_span_end(
        span(
            "s2",
            {"type": "function", "name": "grep", "input": "{}"},
            "2026-01-05T10:00:01.600+00:00",
            "2026-01-05T10:00:02.100+00:00",
        )
    )
    processor.on_span_end(
        span(
            "s3",
            {"type": "response", "response_id": "resp_b", "usage": usage},
            "2026-01-05T10:00:02.200+00:00",
            "2026-01-05T10:00:03.000+00:00",
        )
    )
    processor.on_trace_end(SimpleNamespace(export=lambda: {"object": "trace", "id": "trace_1"}))
    processor.shutdown()
    requests, reports = read_requests([path])
    assert reports[0].format == "agents-sdk-jsonl"
    assert [r.response_id for r in requests] == ["resp_a", "resp_b"]
    assert requests[0].cached_input_tokens == 1024 and requests[0].reasoning_tokens == 32
    assert requests[0].tool_calls[0].tool_name == "grep"
    assert requests[0].tool_calls[0].duration_s == pytest.approx(0.5)


def test_bad_lines_are_counted_by_reason_and_the_rest_is_read(tmp_path: Path) -> None:
    good = FIXTURE.read_text().splitlines()
    broken = list(good)
    broken.insert(5, good[5][: len(good[5]) // 2])  # a truncated line
    broken.insert(9, "[1, 2, 3]")
    wrong = json.loads(good[9])
    wrong["timestamp"] = 12
    broken.insert(12, json.dumps(wrong))
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(broken) + "\n")
    report = ReadReport(str(path))
    requests = [r for rollout in read_rollouts(path, report) for r in rollout]
    assert len(requests) == 7
    assert report.malformed["not JSON (truncated?)"].count == 1
    assert report.malformed["not JSON (truncated?)"].first_line == 6
    assert report.malformed["not a JSON object"].count == 1
    assert "timestamp = 12: expected an ISO 8601 time" in report.malformed["wrong type"].example
    assert any("first at line 6" in line for line in report.lines_of_text())


def test_negative_durations_and_requests_without_an_end_are_dropped_and_counted(
    tmp_path: Path,
) -> None:
    t0 = 1_770_000_000_000_000_000
    ok = {"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 5}
    spans = [
        otlp_span("chat a", ok, t0, t0 + 10**9),
        otlp_span("chat b", ok, t0 + 3 * 10**9, t0 + 2 * 10**9),
        otlp_span("chat c", ok, t0 + 4 * 10**9, 0),
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    report = ReadReport(str(path))
    requests = [r for rollout in read_rollouts(path, report) for r in rollout]
    assert len(requests) == 1
    assert report.warnings["negative duration (request dropped)"].count == 1
    assert report.warnings["request without an end"].count == 1


def test_a_file_with_nothing_usable_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(codex_line("session_meta", {"id": "s"}, "2026-01-01T00:00:00Z") + "\n")
    with pytest.raises(TraceError, match="nothing usable: no request with token usage"):
        list(read_rollouts(path))
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    with pytest.raises(TraceError, match="no known trace format"):
        list(read_rollouts(other))


def test_the_cli_reports_an_unusable_trace_with_exit_code_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    other = tmp_path / "other.jsonl"
    other.write_text("not json at all\n")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sim.cli.app import main; main()",
            "trace",
            "summarize",
            str(other),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "no known trace format" in result.stderr


@pytest.mark.slow
def test_a_million_lines_stream_with_bad_ones_counted(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    template = FIXTURE.read_text().splitlines()
    with path.open("w") as file:
        copies = 0
        written = 0
        while written < 1_000_000:
            for line in template:
                record = json.loads(line)
                if record["type"] == "session_meta":
                    record["payload"]["id"] = f"s{copies}"
                file.write(json.dumps(record) + "\n")
            file.write('{"truncated": \n')
            written += len(template) + 1
            copies += 1
    report = ReadReport(str(path))
    rollouts = sum(1 for _ in read_rollouts(path, report))
    assert report.lines == written
    assert rollouts == 2 * copies
    assert report.requests == 7 * copies
    assert report.malformed["not JSON (truncated?)"].count == copies
