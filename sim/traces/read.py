"""Read any supported trace file: detect its format from its content, stream it, check it.

Files are read a line at a time (JSON Lines), so memory is bounded by the
rollouts being assembled, not by the file.  A line that is not a JSON object,
or a record with a field of the wrong type, is skipped and counted in the
``ReadReport`` by reason with its first line number; a request without an end,
or one that ends before it starts, is dropped and counted; a tool call that
ends before it starts loses its times and is counted.  A file with no usable
request raises ``TraceError`` naming what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from sim.traces import agents_sdk, codex, otlp
from sim.traces.report import ReadReport, TraceError
from sim.traces.table import Request, ToolCall

SNIFF_LINES = 50
"""Lines looked at to tell the format (the first JSON object that names one decides)."""
WHOLE_DOCUMENT_BYTES = 256 * 2**20
"""A file that is one multi-line JSON document (not JSON Lines) is read whole up to this size."""

Progress = Callable[[int, int], None]
"""Called with (bytes read, total bytes) as a file is read."""

MISSING = {
    codex.FORMAT: "no request with token usage (event_msg token_count with info, or "
    "token_usage_record lines)",
    otlp.FORMAT: "no inference span (gen_ai.operation.name chat / generate_content / "
    "text_completion, or openinference.span.kind LLM) with a start and an end",
    agents_sdk.FORMAT: "no response or generation span with started_at and ended_at",
}


def detect(path: Path) -> str:
    """The format of a trace file, from its first JSON objects."""
    for _, record in _records(path, ReadReport(str(path)), limit=SNIFF_LINES):
        found = _format_of(record)
        if found is not None:
            return found
    raise TraceError(
        f"{path}: no known trace format in its first {SNIFF_LINES} lines; expected Codex rollout "
        "JSONL ({timestamp, type, payload} lines), OTLP JSON (resourceSpans) or Agents SDK span "
        'JSONL ({"object": "trace.span", ...})'
    )


def _format_of(record: dict[str, Any]) -> str | None:
    if "resourceSpans" in record or "resource_spans" in record:
        return otlp.FORMAT
    if record.get("object") in ("trace.span", "trace"):
        return agents_sdk.FORMAT
    if record.get("type") in codex.LINE_TYPES and "payload" in record:
        return codex.FORMAT
    return None


def read_rollouts(
    path: Path, report: ReadReport | None = None, progress: Progress | None = None
) -> Iterator[list[Request]]:
    """The rollouts of one file, each its checked requests in order (``request_index`` 0..n-1)."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: no such file")
    report = report if report is not None else ReadReport(str(path))
    report.format = detect(path)
    records = _records(path, report, progress=progress)
    readers = {
        codex.FORMAT: codex.read_codex,
        otlp.FORMAT: otlp.read_otlp,
        agents_sdk.FORMAT: agents_sdk.read_agents_sdk,
    }
    for rollout in readers[report.format](records, report):
        checked = _checked(rollout, report, str(path))
        if checked:
            report.rollouts += 1
            report.requests += len(checked)
            report.tool_calls += sum(len(r.tool_calls) for r in checked)
            yield checked
    if report.requests == 0:
        raise TraceError(f"{path}: nothing usable: {MISSING[report.format]}")


def read_requests(
    paths: Iterable[Path], progress: Progress | None = None
) -> tuple[list[Request], list[ReadReport]]:
    """Every request of several files, and each file's report."""
    requests: list[Request] = []
    reports = []
    for path in paths:
        report = ReadReport(str(path))
        for rollout in read_rollouts(Path(path), report, progress):
            requests.extend(rollout)
        reports.append(report)
    return requests, reports


def _checked(rollout: list[Request], report: ReadReport, source: str) -> list[Request]:
    kept: list[Request] = []
    for request in sorted(rollout, key=lambda r: (r.start_s, r.request_index)):
        if request.end_s < request.start_s:
            report.warn(0, "negative duration (request dropped)", _describe(request))
            continue
        if request.first_output_s is not None and not (
            request.start_s <= request.first_output_s <= request.end_s
        ):
            report.warn(0, "first output outside the request (dropped it)", _describe(request))
            request = replace(request, first_output_s=None)
        calls = tuple(_checked_call(call, report, request) for call in request.tool_calls)
        kept.append(replace(request, source=source, request_index=len(kept), tool_calls=calls))
    return kept


def _checked_call(call: ToolCall, report: ReadReport, request: Request) -> ToolCall:
    if call.start_s is not None and call.end_s is not None and call.end_s < call.start_s:
        report.warn(0, "tool call with a negative duration (times dropped)", call.call_id)
        return replace(call, start_s=None, end_s=None)
    return call


def _describe(request: Request) -> str:
    return (
        f"rollout {request.rollout_id} request {request.request_index}: "
        f"start_s = {request.start_s}, end_s = {request.end_s}"
    )


def _records(
    path: Path, report: ReadReport, limit: int | None = None, progress: Progress | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each JSON object line; other lines are counted as malformed."""
    total = path.stat().st_size
    with path.open("rb") as file:
        head = file.read(1)
        file.seek(0)
        first = file.readline().strip()
        file.seek(0)
        if head in (b"{", b"[") and first in (b"{", b"["):
            yield from _whole_document(path, total, report)
            return
        for number_, raw in enumerate(file, start=1):
            if limit is not None and number_ > limit:
                return
            report.lines = number_
            report.bytes_read += len(raw)
            if progress is not None and number_ % 4096 == 0:
                progress(report.bytes_read, total)
            stripped = raw.strip()
            if not stripped:
                continue
            try:
                record = json.loads(stripped)
            except (json.JSONDecodeError, UnicodeDecodeError):
                report.bad_line(
                    number_, "not JSON (truncated?)", stripped[:80].decode(errors="replace")
                )
                continue
            if not isinstance(record, dict):
                report.bad_line(
                    number_, "not a JSON object", stripped[:80].decode(errors="replace")
                )
                continue
            yield number_, record
    if progress is not None:
        progress(total, total)


def _whole_document(
    path: Path, total: int, report: ReadReport
) -> Iterator[tuple[int, dict[str, Any]]]:
    """A pretty-printed JSON document (an object, or an array of objects) read whole."""
    if total > WHOLE_DOCUMENT_BYTES:
        raise TraceError(
            f"{path}: one JSON document of {total} bytes; above {WHOLE_DOCUMENT_BYTES} bytes "
            "write it as JSON Lines (one object a line) so it can be streamed"
        )
    try:
        document = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TraceError(f"{path}: not JSON ({error})") from error
    items = document if isinstance(document, list) else [document]
    for index, item in enumerate(items, start=1):
        report.lines = index
        if isinstance(item, dict):
            yield index, item
        else:
            report.bad_line(index, "not a JSON object", repr(item)[:80])
