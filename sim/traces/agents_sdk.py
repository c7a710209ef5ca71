"""The OpenAI Agents SDK's spans: a processor that writes them as JSON Lines, and their reader.

``JsonlTracingProcessor`` has the SDK's ``TracingProcessor`` methods; register
it with ``agents.add_trace_processor(JsonlTracingProcessor("spans.jsonl"))``.
It writes each finished span's and trace's ``export()`` as one line, and does
not import the SDK, so this module loads without it.  The reader takes those
lines: a trace is a rollout; ``response`` and ``generation`` spans are its
requests (usage from ``span_data.usage``), ``function`` spans its tool calls,
each given to the last request that started before it.  The SDK records no time
to first output, no transport and no connection.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from sim.traces.report import Malformed, ReadReport, integer, mapping, text
from sim.traces.table import Request, ToolCall

FORMAT = "agents-sdk-jsonl"
REQUEST_SPANS = frozenset({"response", "generation"})


class JsonlTracingProcessor:
    """Writes the Agents SDK's finished spans and traces to a JSON Lines file."""

    def __init__(self, path: Path | str) -> None:
        # Open for the processor's life (the SDK calls shutdown at exit), not one block.
        self._file: IO[str] = Path(path).open("a", encoding="utf-8")  # noqa: SIM115
        self._lock = threading.Lock()

    def _write(self, item: Any) -> None:
        exported = item.export()
        if exported is None:
            return
        line = json.dumps(exported, default=str, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")

    def on_trace_start(self, trace: Any) -> None:
        """Nothing yet: the trace is written when it ends, after its spans."""

    def on_trace_end(self, trace: Any) -> None:
        self._write(trace)

    def on_span_start(self, span: Any) -> None:
        """Nothing yet: a span is written when it ends, with its times."""

    def on_span_end(self, span: Any) -> None:
        self._write(span)

    def force_flush(self) -> None:
        with self._lock:
            self._file.flush()

    def shutdown(self) -> None:
        with self._lock:
            self._file.close()


def read_agents_sdk(
    lines: Iterator[tuple[int, dict[str, Any]]], report: ReadReport
) -> Iterator[list[Request]]:
    """Rollouts of Agents SDK span lines ``(line number, object)``; a trace line closes one."""
    spans: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for number_, record in lines:
        kind = record.get("object")
        trace_id = record.get("trace_id") if kind == "trace.span" else record.get("id")
        if not isinstance(trace_id, str):
            report.bad_line(number_, "wrong type", f"trace id = {trace_id!r}: expected a string")
            continue
        if kind == "trace.span":
            spans[trace_id].append((number_, record))
        elif kind == "trace" and trace_id in spans:
            yield _rollout(trace_id, spans.pop(trace_id), report)
    for trace_id, held in spans.items():
        yield _rollout(trace_id, held, report)


def _rollout(
    trace_id: str, held: list[tuple[int, dict[str, Any]]], report: ReadReport
) -> list[Request]:
    requests: list[Request] = []
    calls: list[tuple[float | None, ToolCall]] = []
    for number_, span in held:
        try:
            data = mapping(span, "span_data", "span")
            kind = text(data, "type", "span_data")
            start_s = _time(span.get("started_at"), "started_at")
            end_s = _time(span.get("ended_at"), "ended_at")
            if kind in REQUEST_SPANS:
                if start_s is None or end_s is None:
                    report.warn(number_, "request without an end", str(span.get("id")))
                    continue
                requests.append(_request(trace_id, span, data, start_s, end_s))
            elif kind == "function":
                name = text(data, "name", "span_data") or "unknown"
                calls.append((start_s, ToolCall(str(span.get("id")), name, start_s, end_s)))
        except Malformed as error:
            report.bad_line(number_, "wrong type", str(error))
    requests.sort(key=lambda r: r.start_s)
    for start_s, call in sorted(calls, key=lambda c: c[0] or 0.0):
        before = [i for i, r in enumerate(requests) if start_s is None or r.start_s <= start_s]
        if before:
            owner = requests[before[-1]]
            requests[before[-1]] = replace(owner, tool_calls=(*owner.tool_calls, call))
    return requests


def _request(
    trace_id: str, span: dict[str, Any], data: dict[str, Any], start_s: float, end_s: float
) -> Request:
    usage = mapping(data, "usage", "span_data")
    inputs = mapping(usage, "input_tokens_details", "usage")
    outputs = mapping(usage, "output_tokens_details", "usage")
    input_tokens = integer(usage, "input_tokens", "usage")
    output_tokens = integer(usage, "output_tokens", "usage")
    error = span.get("error")
    return Request(
        rollout_id=trace_id,
        request_index=0,
        start_s=start_s,
        end_s=end_s,
        format=FORMAT,
        input_tokens=input_tokens
        if input_tokens is not None
        else integer(usage, "prompt_tokens", "usage"),
        cached_input_tokens=integer(inputs, "cached_tokens", "usage.input_tokens_details"),
        output_tokens=output_tokens
        if output_tokens is not None
        else integer(usage, "completion_tokens", "usage"),
        reasoning_tokens=integer(outputs, "reasoning_tokens", "usage.output_tokens_details"),
        model=text(data, "model", "span_data"),
        response_id=text(data, "response_id", "span_data"),
        error_type=None
        if not error
        else str(error.get("message") if isinstance(error, dict) else error),
    )


def _time(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Malformed(f"{name} = {value!r}: expected an ISO 8601 time")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError as error:
        raise Malformed(f"{name} = {value!r}: expected an ISO 8601 time") from error
