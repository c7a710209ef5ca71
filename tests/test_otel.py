"""The OTLP JSON writer: the proto package parses it back, with the GenAI conventions' names."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from sim.report.otel import LOOPBUDGET_ATTRIBUTES, parse_json, write_otlp
from sim.traces.table import REQUEST_SCHEMA, Request, ToolCall, from_table, to_table

T0 = 1_765_000_000.0


def rollout(rollout_id: str, calls: int) -> list[Request]:
    requests = []
    at = T0
    for index in range(calls + 1):
        start, first, end = at, at + 0.25, at + 0.75
        tools = ()
        if index < calls:
            tools = (ToolCall(f"call_{index}", "read_file", end + 0.01, end + 0.51),)
            at = end + 0.52
        requests.append(
            Request(
                rollout_id=rollout_id,
                request_index=index,
                start_s=start,
                end_s=end,
                transport="ws",
                first_output_s=first,
                input_tokens=1000 + 600 * index,
                cached_input_tokens=900 + 600 * index,
                output_tokens=120,
                reasoning_tokens=64,
                model="gpt-5.3-codex-spark",
                server_address="api.openai.com",
                response_id=f"resp_{rollout_id}_{index}",
                previous_response_id=f"resp_{rollout_id}_{index - 1}" if index else None,
                connection_id="conn-1",
                connection_reused=index > 0,
                server_api_overhead_ms=41.5,
                server_engine_ms=380.0,
                server_engine_ttft_ms=60.0,
                tool_calls=tools,
            )
        )
    return requests


@pytest.fixture
def written(tmp_path: Path) -> Path:
    path = tmp_path / "trace.otlp.jsonl"
    assert write_otlp(path, [rollout("a", 3), rollout("b", 1)], agent_name="codex") == 2
    return path


def test_each_line_parses_into_the_proto_export_request(written: Path) -> None:
    lines = written.read_text().splitlines()
    assert len(lines) == 2
    message = parse_json(json.loads(lines[0]))
    spans = message.resource_spans[0].scope_spans[0].spans
    assert [s.name for s in spans] == [
        "invoke_agent codex",
        *[
            name
            for i in range(4)
            for name in ["chat gpt-5.3-codex-spark"] + (["execute_tool read_file"] if i < 3 else [])
        ],
    ]
    kinds = {s.name.split()[0]: s.kind for s in spans}
    assert kinds == {
        "invoke_agent": Span.SPAN_KIND_INTERNAL,
        "chat": Span.SPAN_KIND_CLIENT,
        "execute_tool": Span.SPAN_KIND_INTERNAL,
    }
    assert len({s.trace_id for s in spans}) == 1
    assert all(s.parent_span_id == spans[0].span_id for s in spans[1:])
    first = spans[1]
    assert first.start_time_unix_nano == round(T0 * 1e9)
    assert first.end_time_unix_nano - first.start_time_unix_nano == pytest.approx(0.75e9, abs=1e3)


def test_the_json_follows_the_otlp_rules(written: Path) -> None:
    document = json.loads(written.read_text().splitlines()[1])
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    assert len(span["traceId"]) == 32 and int(span["traceId"], 16) >= 0
    assert len(span["spanId"]) == 16 and len(span["parentSpanId"]) == 16
    assert isinstance(span["startTimeUnixNano"], str)
    assert span["kind"] == 3
    values = {a["key"]: a["value"] for a in span["attributes"]}
    assert values["gen_ai.usage.input_tokens"] == {"intValue": "1000"}
    assert values["gen_ai.response.time_to_first_chunk"]["doubleValue"] == pytest.approx(0.25)
    assert values["loopbudget.connection.reused"] == {"boolValue": False}
    assert "loopbudget.previous_response.id" not in values


def test_same_rollouts_give_the_same_bytes(tmp_path: Path, written: Path) -> None:
    again = tmp_path / "again.jsonl"
    write_otlp(again, [rollout("a", 3), rollout("b", 1)], agent_name="codex")
    assert again.read_bytes() == written.read_bytes()


def test_attribute_names_are_the_conventions_or_documented_extensions(written: Path) -> None:
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
    from opentelemetry.semconv.attributes import error_attributes, server_attributes

    known = {
        getattr(module, name)
        for module in (gen_ai_attributes, error_attributes, server_attributes)
        for name in dir(module)
        if name.isupper() and isinstance(getattr(module, name), str)
    }
    used = set()
    for line in written.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    used |= {a["key"] for a in span["attributes"]}
    ours = {k for k in used if k.startswith("loopbudget.")}
    assert ours <= set(LOOPBUDGET_ATTRIBUTES)
    assert used - ours <= known
    assert {"gen_ai.conversation.id", "gen_ai.response.time_to_first_chunk"} <= used


def test_the_table_round_trips_through_parquet(tmp_path: Path) -> None:
    requests = rollout("a", 2)
    path = tmp_path / "requests.parquet"
    pq.write_table(to_table(requests), path)
    table = pq.read_table(path)
    assert table.schema.names == REQUEST_SCHEMA.names
    assert list(from_table(table)) == requests
    assert REQUEST_SCHEMA.field("start_s").metadata[b"unit"] == b"epoch s"
