"""Requests and their tool calls as OpenTelemetry GenAI spans in OTLP JSON.

The file is what the OpenTelemetry Collector's file exporter writes: one
``ExportTraceServiceRequest`` as JSON a line (``resourceSpans`` -> ``scopeSpans``
-> ``spans``), ids in hex, times in nanoseconds as strings, enums as integers.
Each rollout is one trace and one line: an ``invoke_agent`` span over the whole
rollout, a CLIENT span per request named ``{gen_ai.operation.name}
{gen_ai.request.model}``, and an INTERNAL ``execute_tool {name}`` span per tool
call.  Attribute names are the GenAI semantic conventions' (latest
experimental generation); what they lack is under ``loopbudget.``
(``LOOPBUDGET_ATTRIBUTES``).  The messages are built with the OpenTelemetry
proto package and printed with protobuf's JSON printer; ids are derived from the
rollout id, so the same rollouts give the same file.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from sim.traces.table import Request, ToolCall

SCOPE_NAME = "loopbudget"
"""The instrumentation scope of every span this module writes (how a reader knows its own)."""
OPERATION = "chat"
"""``gen_ai.operation.name`` of a request (the conventions' name for the Responses API)."""
PROVIDER = "openai"

LOOPBUDGET_ATTRIBUTES = {
    "loopbudget.transport": "http, http-full, ws or ws-append",
    "loopbudget.request.index": "the request's 0-based index in its rollout (tool spans: "
    "the request whose response asked for the call)",
    "loopbudget.connection.id": "the connection the request was sent on",
    "loopbudget.connection.reused": "true when that connection had served a request before",
    "loopbudget.previous_response.id": "the response this request continued",
    "loopbudget.server.processing_ms": "the openai-processing-ms header (HTTP)",
    "loopbudget.server.api_overhead_ms": "WebSocket timing: API overhead",
    "loopbudget.server.engine_ms": "WebSocket timing: inference (engine) time",
    "loopbudget.server.engine_ttft_ms": "WebSocket timing: the engine's time to first token",
    "loopbudget.tool.times_known": "false when the trace gave no start or end for the call",
}
"""Attributes the GenAI conventions lack, with what each holds (docs/traces.md lists them)."""

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")
_NS = 1_000_000_000


def rollout_spans(
    requests: Sequence[Request], agent_name: str = "agent", service_name: str = "loopbudget"
) -> ResourceSpans:
    """One rollout's requests (in order, one rollout id) as the spans of one trace."""
    if not requests:
        raise ValueError("a rollout needs at least one request")
    rollout = requests[0].rollout_id
    trace_id = _digest(rollout, 16)
    root_id = _digest(f"{rollout}/agent", 8)
    ends = [r.end_s for r in requests] + [
        c.end_s for r in requests for c in r.tool_calls if c.end_s is not None
    ]
    root = Span(
        trace_id=trace_id,
        span_id=root_id,
        name=f"invoke_agent {agent_name}",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=_ns(min(r.start_s for r in requests)),
        end_time_unix_nano=_ns(max(ends)),
        attributes=_attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": PROVIDER,
                "gen_ai.agent.name": agent_name,
                "gen_ai.conversation.id": rollout,
            }
        ),
    )
    spans = [root]
    for request in requests:
        spans.append(_request_span(request, trace_id, root_id))
        spans.extend(_tool_span(request, call, trace_id, root_id) for call in request.tool_calls)
    resource = Resource(attributes=_attributes({"service.name": service_name}))
    scope = InstrumentationScope(name=SCOPE_NAME)
    return ResourceSpans(resource=resource, scope_spans=[ScopeSpans(scope=scope, spans=spans)])


def _request_span(request: Request, trace_id: bytes, parent_id: bytes) -> Span:
    model = request.model or "unknown"
    attributes = {
        "gen_ai.operation.name": OPERATION,
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.request.model": model,
        "gen_ai.conversation.id": request.rollout_id,
        "gen_ai.response.id": request.response_id,
        "gen_ai.usage.input_tokens": request.input_tokens,
        "gen_ai.usage.output_tokens": request.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": request.cached_input_tokens,
        "gen_ai.usage.reasoning.output_tokens": request.reasoning_tokens,
        "gen_ai.response.time_to_first_chunk": request.ttft_s,
        "server.address": request.server_address,
        "error.type": request.error_type,
        "loopbudget.transport": request.transport,
        "loopbudget.request.index": request.request_index,
        "loopbudget.connection.id": request.connection_id,
        "loopbudget.connection.reused": request.connection_reused,
        "loopbudget.previous_response.id": request.previous_response_id,
        "loopbudget.server.processing_ms": request.server_processing_ms,
        "loopbudget.server.api_overhead_ms": request.server_api_overhead_ms,
        "loopbudget.server.engine_ms": request.server_engine_ms,
        "loopbudget.server.engine_ttft_ms": request.server_engine_ttft_ms,
    }
    status = Status()
    if request.error_type is not None:
        status = Status(code=Status.STATUS_CODE_ERROR, message=request.error_type)
    return Span(
        trace_id=trace_id,
        span_id=_digest(f"{request.rollout_id}/request/{request.request_index}", 8),
        parent_span_id=parent_id,
        name=f"{OPERATION} {model}",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=_ns(request.start_s),
        end_time_unix_nano=_ns(request.end_s),
        attributes=_attributes(attributes),
        status=status,
    )


def _tool_span(request: Request, call: ToolCall, trace_id: bytes, parent_id: bytes) -> Span:
    start_s = call.start_s if call.start_s is not None else request.end_s
    end_s = call.end_s if call.end_s is not None else start_s
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool_name,
        "gen_ai.tool.call.id": call.call_id,
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": request.rollout_id,
        "loopbudget.request.index": request.request_index,
    }
    if call.start_s is None or call.end_s is None:
        attributes["loopbudget.tool.times_known"] = False
    key = f"{request.rollout_id}/request/{request.request_index}/tool/{call.call_id}"
    return Span(
        trace_id=trace_id,
        span_id=_digest(key, 8),
        parent_span_id=parent_id,
        name=f"execute_tool {call.tool_name}",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=_ns(start_s),
        end_time_unix_nano=_ns(end_s),
        attributes=_attributes(attributes),
    )


def to_json(message: ExportTraceServiceRequest) -> dict[str, Any]:
    """OTLP JSON of a message: protobuf's JSON with hex ids and integer enums (the OTLP rules)."""
    document = json_format.MessageToDict(message, use_integers_for_enums=True)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for name in _ID_FIELDS:
                    if name in span:
                        span[name] = base64.b64decode(span[name]).hex()
    return document


def parse_json(document: dict[str, Any]) -> ExportTraceServiceRequest:
    """The message of one OTLP JSON document (hex ids), checked by the proto package."""
    copy = json.loads(json.dumps(document))
    for resource in copy.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for name in _ID_FIELDS:
                    if span.get(name):
                        span[name] = base64.b64encode(bytes.fromhex(span[name])).decode()
    return json_format.ParseDict(copy, ExportTraceServiceRequest())


class OtlpWriter:
    """Appends rollouts to an OTLP JSON Lines file, one rollout (one trace) a line.

    Use as a context manager; ``write`` may be called as each rollout completes
    (the line is flushed, so a reader sees whole rollouts only).
    """

    def __init__(
        self, path: Path | str, agent_name: str = "agent", service_name: str = "loopbudget"
    ) -> None:
        self.path = Path(path)
        self.agent_name = agent_name
        self.service_name = service_name
        self.rollouts = 0
        self._file: IO[str] | None = None

    def __enter__(self) -> OtlpWriter:
        self._file = self.path.open("w", encoding="utf-8")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def write(self, requests: Sequence[Request]) -> None:
        """Write one rollout's requests (in order, one rollout id)."""
        if self._file is None:
            raise RuntimeError("OtlpWriter.write outside its with block")
        spans = rollout_spans(requests, self.agent_name, self.service_name)
        message = ExportTraceServiceRequest(resource_spans=[spans])
        self._file.write(json.dumps(to_json(message), separators=(",", ":")) + "\n")
        self._file.flush()
        self.rollouts += 1


def write_otlp(
    path: Path | str, rollouts: Iterable[Sequence[Request]], agent_name: str = "agent"
) -> int:
    """Write rollouts (each a sequence of one rollout's requests) to ``path``; their count."""
    with OtlpWriter(path, agent_name) as writer:
        for requests in rollouts:
            writer.write(requests)
        return writer.rollouts


def _attributes(values: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=_value(v)) for k, v in values.items() if v is not None]


def _value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=str(value))


def _digest(key: str, size: int) -> bytes:
    return hashlib.sha256(key.encode()).digest()[:size]


def _ns(seconds: float) -> int:
    return round(seconds * _NS)
