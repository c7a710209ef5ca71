"""The Responses API wire format the emulator speaks: objects, items, events, errors.

Shapes follow the openai SDK's types (``openai.types.responses``): a ``Response``
object, output items (reasoning, function call, message), the streaming events
(``response.created`` ... ``response.completed``) and the error bodies: HTTP
``{"error": {...}}`` and the WebSocket ``error`` event (``ResponseWsError``: a
``status`` and an ``error`` with ``type``, ``code``, ``message``, ``param``).
Text is counted in tokens of ``bytes_per_token`` characters, the scenario's
rule, so the server counts what it processed from what it received.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

Item = dict[str, Any]
Event = dict[str, Any]


class ApiError(Exception):
    """A request the API refuses: an HTTP status and the error object."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.param = status, code, message, param

    def body(self) -> dict[str, Any]:
        """The error object (``error`` of the HTTP body and of the WebSocket event)."""
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"type": kind, "code": self.code, "message": self.message, "param": self.param}

    def http_json(self) -> dict[str, Any]:
        return {"error": self.body()}

    def stream_event(self) -> Event:
        """The ``error`` event that ends a stream of server-sent events."""
        return {"type": "error", "code": self.code, "message": self.message, "param": self.param}

    def ws_event(self, stream_id: str | None = None) -> Event:
        event: Event = {"type": "error", "status": self.status, "error": self.body()}
        if stream_id is not None:
            event["stream_id"] = stream_id
        return event


SERVER_ERROR = ApiError(
    500, "server_error", "The server had an error while processing your request."
)
"""What a client is told when serving its request failed inside the server."""
_LOG = logging.getLogger("uvicorn.error")


def log_failure(error: BaseException) -> None:
    """One line in the server's log for a request that failed inside it."""
    _LOG.error("request failed: %s: %s", type(error).__name__, shown(error))


SHOWN_CHARS = 64
"""Longest piece of a client's text an error message quotes."""


def shown(text: Any) -> str:
    """``text`` as an error message quotes it: at most ``SHOWN_CHARS`` characters."""
    text = str(text)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def text_of(item: Item) -> str:
    """The text an item carries (message content, call arguments, tool output, summaries)."""
    parts: list[str] = []
    for key in ("content", "output", "summary"):
        value = item.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(p.get("text", "") for p in value if isinstance(p, dict))
    if isinstance(item.get("arguments"), str):
        parts.append(item["arguments"])
    return "".join(parts)


def tokens_in(text: str, bytes_per_token: float) -> float:
    return len(text) / bytes_per_token


def tools_text(tools: list[dict[str, Any]]) -> str:
    """The text of tool definitions the model reads: names, descriptions and schemas."""
    return "".join(
        tool.get("name", "") + tool.get("description", "") + json.dumps(tool.get("parameters", {}))
        for tool in tools
    )


def normalized_input(value: Any) -> list[Item]:
    """The request's ``input`` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(i, dict) for i in value):
        raise ApiError(400, "invalid_type", "input must be a string or a list of items", "input")
    return value


def padded(text_chars: int, wrap: str = "") -> str:
    """A string of exactly ``text_chars`` characters (JSON arguments when ``wrap`` is a key)."""
    if not wrap:
        return ("lorem ipsum dolor sit amet " * (text_chars // 27 + 1))[:text_chars]
    envelope = len(json.dumps({wrap: ""}))
    return json.dumps({wrap: "x" * max(0, text_chars - envelope)})


@dataclass(frozen=True)
class ResponseHead:
    """The fields of a response object that do not change while it streams."""

    response_id: str
    model: str
    instructions: str | None
    tools: list[dict[str, Any]]
    metadata: dict[str, str]
    previous_response_id: str | None
    store: bool
    created_at: int

    @classmethod
    def of(cls, body: dict[str, Any], store: bool) -> ResponseHead:
        return cls(
            new_id("resp"),
            str(body.get("model", "")),
            body.get("instructions"),
            list(body.get("tools") or []),
            dict(body.get("metadata") or {}),
            body.get("previous_response_id"),
            store,
            int(time.time()),
        )

    def response(
        self, status: str, output: list[Item], usage: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The ``Response`` object in ``status`` with ``output``."""
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": output,
            "instructions": self.instructions,
            "tools": self.tools,
            "tool_choice": "auto",
            "parallel_tool_calls": False,
            "metadata": self.metadata,
            "previous_response_id": self.previous_response_id,
            "store": self.store,
            "usage": usage,
            "error": None,
            "incomplete_details": None,
            "text": {"format": {"type": "text"}},
            "truncation": "disabled",
        }


def usage(input_tokens: float, cached_tokens: float, output_tokens: float) -> dict[str, Any]:
    prompt, cached, out = round(input_tokens), round(cached_tokens), round(output_tokens)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + out,
    }


def reasoning_item() -> Item:
    return {"type": "reasoning", "id": new_id("rs"), "summary": []}


def function_call_item(name: str, arguments: str, status: str) -> Item:
    return {
        "type": "function_call",
        "id": new_id("fc"),
        "call_id": new_id("call"),
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(text: str, status: str) -> Item:
    """An assistant message; while in progress its content parts come as their own events."""
    content = [text_part(text)] if status == "completed" else []
    return {
        "type": "message",
        "id": new_id("msg"),
        "role": "assistant",
        "status": status,
        "content": content,
    }


def sse(event: Event) -> bytes:
    """One server-sent event as the SDK's decoder reads it."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
