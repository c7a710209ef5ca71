"""The OTLP reader: every generation of the GenAI attributes, the project's own OTel output
and the Agents SDK processor read back to the same rows."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from trace_lines import otlp_span

from sim.report.otel import write_otlp
from sim.traces.agents_sdk import JsonlTracingProcessor
from sim.traces.read import detect, read_requests, read_rollouts
from sim.traces.table import Request, ToolCall


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
