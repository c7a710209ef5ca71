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

from sim.traces.report import Malformed, ReadReport
from sim.traces.table import Request, ToolCall

FORMAT = "otlp-json"
OWN_SCOPE = "loopbudget"
INFERENCE_OPERATIONS = frozenset({"chat", "generate_content", "text_completion", "responses"})

ALIASES: dict[str, tuple[str, ...]] = {
    "input_tokens": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
    ),
    "output_tokens": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    ),
    "cached_input_tokens": (
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_read_input_tokens",
        "gen_ai.usage.cached_tokens",
        "llm.token_count.prompt_details.cache_read",
    ),
    "reasoning_tokens": (
        "gen_ai.usage.reasoning.output_tokens",
        "gen_ai.usage.reasoning_tokens",
        "llm.token_count.completion_details.reasoning",
    ),
    "conversation": ("gen_ai.conversation.id", "session.id"),
    "model": ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name"),
    "tool_name": ("gen_ai.tool.name", "tool.name"),
    "call_id": ("gen_ai.tool.call.id", "tool_call.id"),
    "ttft_s": ("gen_ai.response.time_to_first_chunk",),
}
"""Each column and the attribute names that carry it, the latest conventions' name first."""


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
    for resource in _list(record, "resourceSpans", "resource_spans"):
        for scope in _list(resource, "scopeSpans", "scope_spans", "instrumentationLibrarySpans"):
            scope_info = scope.get("scope") or {}
            own = isinstance(scope_info, dict) and scope_info.get("name") == OWN_SCOPE
            for span in _list(scope, "spans"):
                yield span, _attributes(span.get("attributes") or []), own


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
    start_s, end_s = _times(span)
    if end_s is None or start_s is None:
        return None
    ttft_s = _number(a, "ttft_s")
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
        rollout_id=str(_first(a, "conversation") or trace_id),
        request_index=_int(index, "loopbudget.request.index") if index is not None else 0,
        start_s=start_s,
        end_s=end_s,
        format="loopbudget-otlp" if own else FORMAT,
        transport=_str(a.get("loopbudget.transport")),
        first_output_s=None if ttft_s is None else start_s + ttft_s,
        input_tokens=_count(a, "input_tokens"),
        cached_input_tokens=_count(a, "cached_input_tokens"),
        output_tokens=_count(a, "output_tokens"),
        reasoning_tokens=_count(a, "reasoning_tokens"),
        model=_str(_first(a, "model")),
        server_address=_str(a.get("server.address")),
        response_id=_str(a.get("gen_ai.response.id")),
        previous_response_id=_str(a.get("loopbudget.previous_response.id")),
        connection_id=_str(a.get("loopbudget.connection.id")),
        connection_reused=_bool(a.get("loopbudget.connection.reused")),
        server_processing_ms=_float(a, "loopbudget.server.processing_ms"),
        server_api_overhead_ms=_float(a, "loopbudget.server.api_overhead_ms"),
        server_engine_ms=_float(a, "loopbudget.server.engine_ms"),
        server_engine_ttft_ms=_float(a, "loopbudget.server.engine_ttft_ms"),
        error_type=_str(error),
    )


def _attach_tool(
    span: dict[str, Any], a: dict[str, Any], trace_id: str, by_rollout: dict[str, list[Request]]
) -> None:
    start_s, end_s = _times(span)
    rollout = by_rollout.get(str(_first(a, "conversation") or trace_id))
    if rollout is None and len(by_rollout) == 1:
        rollout = next(iter(by_rollout.values()))
    if not rollout:
        return
    index = a.get("loopbudget.request.index")
    if index is not None:
        owner = next((r for r in rollout if r.request_index == _int(index, "index")), None)
    else:
        before = [r for r in rollout if start_s is None or r.start_s <= start_s]
        owner = before[-1] if before else rollout[0]
    if owner is None:
        return
    if a.get("loopbudget.tool.times_known") is False:
        start_s = end_s = None
    name = str(_first(a, "tool_name") or str(span.get("name", "")).removeprefix("execute_tool "))
    call = ToolCall(str(_first(a, "call_id") or span.get("spanId") or ""), name, start_s, end_s)
    position = rollout.index(owner)
    rollout[position] = _with_call(owner, call)


def _with_call(request: Request, call: ToolCall) -> Request:
    return replace(request, tool_calls=(*request.tool_calls, call))


def _times(span: dict[str, Any]) -> tuple[float | None, float | None]:
    start = span.get("startTimeUnixNano", span.get("start_time_unix_nano"))
    end = span.get("endTimeUnixNano", span.get("end_time_unix_nano"))
    return _nanos(start, "startTimeUnixNano"), _nanos(end, "endTimeUnixNano")


def _nanos(value: Any, name: str) -> float | None:
    if value in (None, "", "0", 0):
        return None
    try:
        return int(value) / 1e9
    except (TypeError, ValueError) as error:
        raise Malformed(f"{name} = {value!r}: expected nanoseconds (an integer)") from error


def _attributes(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        raise Malformed(f"attributes = {items!r}: expected a list of key-value pairs")
    values = {}
    for item in items:
        if not isinstance(item, dict) or "key" not in item:
            raise Malformed(f"attribute = {item!r}: expected {{key, value}}")
        values[item["key"]] = _value(item.get("value") or {})
    return values


def _value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return _int(value["intValue"], "intValue")
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [_value(v) for v in value["arrayValue"].get("values", [])]
    return None


def _first(a: dict[str, Any], column: str) -> Any:
    return next((a[name] for name in ALIASES[column] if a.get(name) is not None), None)


def _count(a: dict[str, Any], column: str) -> int | None:
    value = _first(a, column)
    if value is None:
        return None
    count = _int(value, ALIASES[column][0])
    if count < 0:
        raise Malformed(f"{ALIASES[column][0]} = {value!r}: expected a count >= 0")
    return count


def _number(a: dict[str, Any], column: str) -> float | None:
    value = _first(a, column)
    return None if value is None else _as_float(value, ALIASES[column][0])


def _float(a: dict[str, Any], name: str) -> float | None:
    value = a.get(name)
    return None if value is None else _as_float(value, name)


def _as_float(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise Malformed(f"{name} = {value!r}: expected a number")
    try:
        return float(value)
    except ValueError as error:
        raise Malformed(f"{name} = {value!r}: expected a number") from error


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise Malformed(f"{name} = {value!r}: expected an integer")
    try:
        return int(value)
    except (TypeError, ValueError) as error:
        raise Malformed(f"{name} = {value!r}: expected an integer") from error


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _list(record: dict[str, Any], *names: str) -> list[dict[str, Any]]:
    for name in names:
        value = record.get(name)
        if value is not None:
            if not isinstance(value, list):
                raise Malformed(f"{name} = {str(value)[:40]!r}: expected a list")
            return value
    return []
