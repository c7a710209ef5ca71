"""One recorded request and what is read from its body and its events.

Times are ``time.monotonic()`` seconds (``_at_s``) taken at the proxy: the
request's start when the proxy took it, its first output event and its end when
the proxy passed them on.  Nothing of the content is kept: ids, counts, usage
and the service's own timing fields only.  Reading a body or an event happens
after it has been passed on, so it never delays what it reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

CALL_TYPES = ("function_call", "custom_tool_call")
"""Output items that ask the client for a tool."""
ANSWER_TYPES = ("function_call_output", "custom_tool_call_output")
MODEL_ITEM_TYPES = ("reasoning", *CALL_TYPES)
"""Input items only a model writes: a request that carries them resends its history."""
FIRST_OUTPUT = "response.output_item.added"
ENDS = ("response.completed", "response.incomplete", "response.failed")
ERROR = "error"
TIMING = "responsesapi.websocket_timing"
_WANTED = frozenset((*ENDS, ERROR, TIMING, "response.created"))
_TYPE = re.compile(rb'"type"\s*:\s*"([^"]+)"')
TIMING_FIELDS = {
    "api_overhead_ms": "responses_duration_excl_engine_and_client_tool_time_ms",
    "engine_ms": "engine_service_total_ms",
    "engine_ttft_ms": "engine_service_ttft_total_ms",
}
"""The WebSocket timing metrics the recorder keeps, by the name it keeps them under."""


@dataclass
class Exchange:
    """One request through the proxy: a POST to ``/responses`` or a ``response.create``."""

    transport: str
    """``ws``, or ``http`` until its chain says whether it resends its history."""
    connection_id: str
    connection_reused: bool
    started_at_s: float
    server_address: str
    lane: str | None = None
    model: str | None = None
    previous_response_id: str | None = None
    answered_calls: tuple[str, ...] = ()
    """Call ids of the tool outputs its input carries."""
    resends_history: bool = False
    first_output_at_s: float | None = None
    ended_at_s: float | None = None
    response_id: str | None = None
    usage: dict[str, Any] | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)
    """(call id, tool name) of each tool call its response asked for."""
    processing_ms: float | None = None
    timing: dict[str, float] = field(default_factory=dict)
    error_type: str | None = None
    added_s: float = 0.0
    """What the proxy added to this request: taking it to passing it on, and passing on
    the event that ended it."""

    def read_request(self, body: dict[str, Any]) -> None:
        """Note what the request body says (its chain and what it answers)."""
        model = body.get("model")
        self.model = model if isinstance(model, str) else None
        previous = body.get("previous_response_id")
        self.previous_response_id = previous if isinstance(previous, str) else None
        items = body.get("input")
        items = items if isinstance(items, list) else []
        typed = [item for item in items if isinstance(item, dict)]
        self.answered_calls = tuple(
            str(item.get("call_id")) for item in typed if item.get("type") in ANSWER_TYPES
        )
        self.resends_history = any(
            item.get("type") in MODEL_ITEM_TYPES or item.get("role") == "assistant"
            for item in typed
        )

    def read_response(self, response: dict[str, Any]) -> None:
        """Note a response object: its id, usage, tool calls and error."""
        if isinstance(response.get("id"), str):
            self.response_id = response["id"]
        if isinstance(response.get("usage"), dict):
            self.usage = response["usage"]
        output = response.get("output")
        if isinstance(output, list) and output:
            self.calls = [
                (str(item.get("call_id")), str(item.get("name")))
                for item in output
                if isinstance(item, dict) and item.get("type") in CALL_TYPES
            ]
        error = response.get("error")
        if isinstance(error, dict):
            self.error_type = str(error.get("code") or error.get("type") or "error")

    def read_event(self, event: dict[str, Any], at_s: float) -> bool:
        """Note an event passed on at ``at_s``; True when it ended the request."""
        kind = event.get("type")
        if kind in ENDS:
            self.read_response(event.get("response") or {})
            if kind == "response.failed" and self.error_type is None:
                self.error_type = "response.failed"
            self.ended_at_s = at_s
            return True
        if kind == ERROR:
            error = event.get("error")
            if not isinstance(error, dict):
                error = {}
            self.error_type = str(error.get("code") or error.get("type") or ERROR)
            self.ended_at_s = at_s
            return True
        if kind == "response.created":
            self.read_response(event.get("response") or {})
        return False

    def read_timing(self, event: dict[str, Any]) -> None:
        metrics = event.get("timing_metrics")
        if isinstance(metrics, dict):
            for name, wire in TIMING_FIELDS.items():
                if isinstance(metrics.get(wire), int | float):
                    self.timing[name] = float(metrics[wire])


def event_type(data: bytes) -> str | None:
    """The ``type`` of a JSON event, read from its first bytes (None if it is not there)."""
    found = _TYPE.search(data, 0, 160)
    return found.group(1).decode() if found else None


def wanted(kind: str | None) -> bool:
    """Whether an event of ``kind`` must be parsed (the rest are only timed)."""
    return kind is None or kind in _WANTED


def parse(data: bytes | str) -> dict[str, Any] | None:
    """A JSON object, or None for anything else."""
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
