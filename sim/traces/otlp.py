"""OTLP JSON (the Collector's file exporter, one export request a line) into requests.

An inference span is one whose ``gen_ai.operation.name`` is ``chat``,
``generate_content``, ``text_completion`` or ``responses`` (or whose
``openinference.span.kind`` is ``LLM``); a tool span is ``execute_tool`` (or
OpenInference ``TOOL``).  Attributes are read under both generations of the GenAI
conventions' names and OpenInference's aliases (``ALIASES``).  A rollout is the
``gen_ai.conversation.id`` (OpenInference ``session.id``) or else the trace; a
tool call belongs to its ``loopbudget.request.index`` when the project wrote
it, else to the last request of its rollout that started before it.  A trace
whose root span has arrived is complete and emitted at the end of that line;
spans of traces without a root in sight are held until the end of the file.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from sim.traces.otlp_attributes import (
    as_bool,
    as_int,
    as_str,
    attribute_map,
    count_column,
    first_column,
    float_attribute,
    list_field,
    number_column,
    span_times,
)
from sim.traces.report import Malformed, ReadReport
from sim.traces.table import Request, ToolCall

FORMAT = "otlp-json"
OWN_SCOPE = "loopbudget"
INFERENCE_OPERATIONS = frozenset({"chat", "generate_content", "text_completion", "responses"})


@dataclass
class _Trace:
    requests: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    tools: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    own: bool = False


def read_otlp(
    lines: Iterator[tuple[int, dict[str, Any]]], report: ReadReport
) -> Iterator[list[Request]]:
    """Rollouts of OTLP JSON export requests ``(line number, object)``."""
    pending: dict[str, _Trace] = defaultdict(_Trace)
    for number_, record in lines:
        complete: set[str] = set()
        try:
            for span, attributes, own in _spans(record):
                trace_id = str(span.get("traceId") or span.get("trace_id") or "")
                kind = _kind(attributes)
                if not (span.get("parentSpanId") or span.get("parent_span_id")) and kind != "llm":
                    complete.add(trace_id)
                if kind == "llm":
                    pending[trace_id].requests.append((span, attributes))
                elif kind == "tool":
                    pending[trace_id].tools.append((span, attributes))
                pending[trace_id].own |= own
        except Malformed as error:
            report.bad_line(number_, "wrong type", str(error))
            continue
        for trace_id in complete:
            trace = pending.pop(trace_id, None)
            if trace is not None:
                yield from _rollouts(trace_id, trace, report, number_)
    for trace_id, trace in pending.items():
        yield from _rollouts(trace_id, trace, report, report.lines)


def _spans(record: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], bool]]:
    for resource in list_field(record, "resourceSpans", "resource_spans"):
        for scope in list_field(
            resource, "scopeSpans", "scope_spans", "instrumentationLibrarySpans"
        ):
            scope_info = scope.get("scope") or {}
            own = isinstance(scope_info, dict) and scope_info.get("name") == OWN_SCOPE
            for span in list_field(scope, "spans"):
                yield span, attribute_map(span.get("attributes") or []), own


def _kind(attributes: dict[str, Any]) -> str | None:
    operation = attributes.get("gen_ai.operation.name")
    openinference = str(attributes.get("openinference.span.kind", "")).upper()
    if operation in INFERENCE_OPERATIONS or openinference == "LLM":
        return "llm"
    if operation == "execute_tool" or openinference == "TOOL":
        return "tool"
    return None


def _rollouts(
    trace_id: str, trace: _Trace, report: ReadReport, line: int
) -> Iterator[list[Request]]:
    by_rollout: dict[str, list[Request]] = defaultdict(list)
    for span, attributes in trace.requests:
        try:
            request = _request(span, attributes, trace_id, trace.own)
        except Malformed as error:
            report.bad_line(line, "wrong type", str(error))
            continue
        if request is None:
            report.warn(line, "request without an end", str(span.get("name")))
            continue
        by_rollout[request.rollout_id].append(request)
    for rollout in by_rollout.values():
        rollout.sort(key=lambda r: (r.start_s, r.request_index))
    for span, attributes in trace.tools:
        try:
            _attach_tool(span, attributes, trace_id, by_rollout)
        except Malformed as error:
            report.bad_line(line, "wrong type", str(error))
    yield from by_rollout.values()


def _request(span: dict[str, Any], a: dict[str, Any], trace_id: str, own: bool) -> Request | None:
    start_s, end_s = span_times(span)
    if end_s is None or start_s is None:
        return None
    ttft_s = number_column(a, "ttft_s")
    status = span.get("status") or {}
    error = a.get("error.type")
    if (
        error is None
        and isinstance(status, dict)
        and status.get("code") in (2, "STATUS_CODE_ERROR")
    ):
        error = status.get("message") or "error"
    index = a.get("loopbudget.request.index")
    return Request(
        rollout_id=str(first_column(a, "conversation") or trace_id),
        request_index=as_int(index, "loopbudget.request.index") if index is not None else 0,
        start_s=start_s,
        end_s=end_s,
        format="loopbudget-otlp" if own else FORMAT,
        transport=as_str(a.get("loopbudget.transport")),
        first_output_s=None if ttft_s is None else start_s + ttft_s,
        input_tokens=count_column(a, "input_tokens"),
        cached_input_tokens=count_column(a, "cached_input_tokens"),
        output_tokens=count_column(a, "output_tokens"),
        reasoning_tokens=count_column(a, "reasoning_tokens"),
        model=as_str(first_column(a, "model")),
        server_address=as_str(a.get("server.address")),
        response_id=as_str(a.get("gen_ai.response.id")),
        previous_response_id=as_str(a.get("loopbudget.previous_response.id")),
        connection_id=as_str(a.get("loopbudget.connection.id")),
        connection_reused=as_bool(a.get("loopbudget.connection.reused")),
        server_processing_ms=float_attribute(a, "loopbudget.server.processing_ms"),
        server_api_overhead_ms=float_attribute(a, "loopbudget.server.api_overhead_ms"),
        server_engine_ms=float_attribute(a, "loopbudget.server.engine_ms"),
        server_engine_ttft_ms=float_attribute(a, "loopbudget.server.engine_ttft_ms"),
        error_type=as_str(error),
    )


def _attach_tool(
    span: dict[str, Any], a: dict[str, Any], trace_id: str, by_rollout: dict[str, list[Request]]
) -> None:
    start_s, end_s = span_times(span)
    rollout = by_rollout.get(str(first_column(a, "conversation") or trace_id))
    if rollout is None and len(by_rollout) == 1:
        rollout = next(iter(by_rollout.values()))
    if not rollout:
        return
    index = a.get("loopbudget.request.index")
    if index is not None:
        owner = next((r for r in rollout if r.request_index == as_int(index, "index")), None)
    else:
        before = [r for r in rollout if start_s is None or r.start_s <= start_s]
        owner = before[-1] if before else rollout[0]
    if owner is None:
        return
    if a.get("loopbudget.tool.times_known") is False:
        start_s = end_s = None
    name = str(
        first_column(a, "tool_name") or str(span.get("name", "")).removeprefix("execute_tool ")
    )
    call = ToolCall(
        str(first_column(a, "call_id") or span.get("spanId") or ""), name, start_s, end_s
    )
    position = rollout.index(owner)
    rollout[position] = _with_call(owner, call)


def _with_call(request: Request, call: ToolCall) -> Request:
    return replace(request, tool_calls=(*request.tool_calls, call))
