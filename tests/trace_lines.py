"""Lines of the trace formats for the trace readers' tests: the real Codex session, a Codex
event line and an OTLP span built by hand."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "data" / "traces" / "codex-0.66-session.jsonl"
"""A real Codex CLI session (its licence and source: data/traces/README.md)."""


def codex_line(kind: str, payload: dict, at: str) -> str:
    return json.dumps({"timestamp": at, "type": kind, "payload": payload})


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
        "spanId": format(zlib.crc32(name.encode()), "016x"),
        "name": name,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(end_ns),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }
    if parent:
        span["parentSpanId"] = parent
    return span
