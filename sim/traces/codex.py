"""Codex CLI rollout JSONL (``~/.codex/sessions/.../rollout-*.jsonl``) into requests.

One ``{timestamp, type, payload}`` object a line.  A user message starts a
rollout (one user task; the rollout id is the session id and the task's number);
a ``turn_context`` line, a user message or a tool's output starts a request; the
request ends at the first ``event_msg`` ``token_count`` whose cumulative usage is
new (the event repeats: each request is counted once, with ``last_token_usage``)
or at a ``token_usage_record`` line (newer versions: it also names the response;
when it repeats the usage a ``token_count`` just closed, it only adds the id).
``function_call``, ``custom_tool_call`` and ``local_shell_call`` items are the
calls the open request's response asked for: each starts at its item's line and
ends at its output's line (paired by ``call_id``), or at ``started_at_ms`` /
``completed_at_ms`` of an ``item_completed`` event where a newer version writes
one.  Codex records no time to first output: ``first_output_s`` stays null.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sim.traces.report import Malformed, ReadReport, integer, mapping, number, text
from sim.traces.table import Request, ToolCall

FORMAT = "codex-rollout"
LINE_TYPES = frozenset(
    {
        "session_meta",
        "turn_context",
        "response_item",
        "event_msg",
        "compacted",
        "token_usage_record",
    }
)
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


@dataclass
class _Open:
    """A request being read: when it started and the calls its response asked for."""

    start_s: float
    line: int
    calls: list[str] = field(default_factory=list)


@dataclass
class _State:
    session: str = "session"
    model: str | None = None
    task: int = -1
    opened: _Open | None = None
    closed: list[Request] = field(default_factory=list)
    call_names: dict[str, str] = field(default_factory=dict)
    call_start_s: dict[str, float] = field(default_factory=dict)
    call_end_s: dict[str, float] = field(default_factory=dict)
    last_total: tuple[int | None, ...] | None = None
    last_closed_usage: tuple[int | None, ...] | None = None
    pending_start_s: float | None = None


def read_codex(
    lines: Iterator[tuple[int, dict[str, Any]]], report: ReadReport
) -> Iterator[list[Request]]:
    """Rollouts (each its requests in order) of Codex rollout lines ``(line number, object)``."""
    state = _State()
    for number_, record in lines:
        try:
            finished = _step(state, number_, record, report)
        except Malformed as error:
            report.bad_line(number_, "wrong type", str(error))
            continue
        if finished is not None:
            yield finished
    last = _finish_task(state, report, report.lines)
    if last:
        yield last


def _step(
    state: _State, line: int, record: dict[str, Any], report: ReadReport
) -> list[Request] | None:
    kind = text(record, "type", "line")
    if kind not in LINE_TYPES:
        return None
    at_s = _timestamp(record.get("timestamp"))
    payload = mapping(record, "payload", kind)
    item = text(payload, "type", f"{kind}.payload")
    if kind == "session_meta":
        state.session = text(payload, "id", "session_meta.payload") or state.session
    elif kind == "turn_context":
        state.model = text(payload, "model", "turn_context.payload") or state.model
        _open(state, at_s, line)
    elif kind == "event_msg" and item == "user_message":
        finished = _finish_task(state, report, line)
        state.task += 1
        state.pending_start_s = at_s
        return finished
    elif kind == "event_msg" and item == "token_count":
        info = mapping(payload, "info", "token_count.payload")
        total = _usage(mapping(info, "total_token_usage", "token_count.info"), "total")
        if info and total != state.last_total:
            state.last_total = total
            last_usage = mapping(info, "last_token_usage", "token_count.info")
            _close(state, at_s, line, _usage(last_usage, "token_count.info.last_token_usage"), None)
    elif kind == "token_usage_record":
        usage = _usage(mapping(payload, "usage", "token_usage_record.payload"), "usage")
        response_id = text(payload, "response_id", "token_usage_record.payload")
        last = state.closed[-1] if state.closed else None
        repeated = usage == state.last_closed_usage
        if state.opened is None and last is not None and last.response_id is None and repeated:
            state.closed[-1] = replace(last, response_id=response_id)
            return None
        _close(state, at_s, line, usage, response_id)
    elif kind == "event_msg" and item == "item_completed":
        _item_times(state, payload)
    elif kind == "response_item" and item in CALLS:
        call_id = text(payload, "call_id", f"{item}") or f"line-{line}"
        state.call_names[call_id] = text(payload, "name", f"{item}") or item
        state.call_start_s.setdefault(call_id, at_s)
        if state.opened is None:
            _open(state, at_s, line)
        assert state.opened is not None
        state.opened.calls.append(call_id)
    elif kind == "response_item" and item in OUTPUTS:
        answered_id = text(payload, "call_id", f"{item}")
        if answered_id is not None:
            state.call_end_s.setdefault(answered_id, at_s)
        state.pending_start_s = at_s
    return None


def _open(state: _State, at_s: float, line: int) -> None:
    if state.opened is None:
        start_s = state.pending_start_s if state.pending_start_s is not None else at_s
        state.opened = _Open(min(start_s, at_s), line)
        state.pending_start_s = None


def _close(
    state: _State,
    at_s: float,
    line: int,
    usage: tuple[int | None, ...],
    response_id: str | None,
) -> None:
    if state.opened is None:
        _open(state, at_s, line)
    assert state.opened is not None
    if state.task < 0:
        state.task = 0
    input_tokens, cached, output, reasoning = usage[:4]
    state.closed.append(
        Request(
            rollout_id=f"{state.session}/{state.task}",
            request_index=len(state.closed),
            start_s=state.opened.start_s,
            end_s=at_s,
            format=FORMAT,
            input_tokens=input_tokens,
            cached_input_tokens=cached,
            output_tokens=output,
            reasoning_tokens=reasoning,
            model=state.model,
            response_id=response_id,
            tool_calls=tuple(ToolCall(call_id, "") for call_id in state.opened.calls),
        )
    )
    state.last_closed_usage = usage
    state.opened = None


def _finish_task(state: _State, report: ReadReport, line: int) -> list[Request]:
    """The requests of the task read so far, with their calls' names and times filled in."""
    if state.opened is not None:
        report.warn(state.opened.line, "request without an end", "no token_count after it")
    state.opened = None
    requests = [
        replace(
            r,
            tool_calls=tuple(
                ToolCall(
                    c.call_id,
                    state.call_names.get(c.call_id, "unknown"),
                    state.call_start_s.get(c.call_id),
                    state.call_end_s.get(c.call_id),
                )
                for c in r.tool_calls
            ),
        )
        for r in state.closed
    ]
    state.closed = []
    state.call_names.clear()
    state.call_start_s.clear()
    state.call_end_s.clear()
    return requests


def _item_times(state: _State, payload: dict[str, Any]) -> None:
    """A newer version's ``item_completed``: the tool's own start and end, in epoch ms."""
    item = mapping(payload, "item", "item_completed.payload")
    call_id = text(item, "call_id", "item_completed.item") or text(
        item, "id", "item_completed.item"
    )
    if call_id is None:
        return
    started = number(payload, "started_at_ms", "item_completed.payload")
    completed = number(payload, "completed_at_ms", "item_completed.payload")
    started = started if started is not None else number(item, "started_at_ms", "item")
    completed = completed if completed is not None else number(item, "completed_at_ms", "item")
    duration_ms = number(item, "duration_ms", "item_completed.item")
    if started is not None:
        state.call_start_s[call_id] = started / 1000
        if completed is None and duration_ms is not None:
            completed = started + duration_ms
    if completed is not None:
        state.call_end_s[call_id] = completed / 1000


def _usage(usage: dict[str, Any], where: str) -> tuple[int | None, ...]:
    return (
        integer(usage, "input_tokens", where),
        integer(usage, "cached_input_tokens", where),
        integer(usage, "output_tokens", where),
        integer(usage, "reasoning_output_tokens", where),
        integer(usage, "total_tokens", where),
    )


def _timestamp(value: Any) -> float:
    if not isinstance(value, str):
        raise Malformed(f"timestamp = {value!r}: expected an ISO 8601 time")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError as error:
        raise Malformed(f"timestamp = {value!r}: expected an ISO 8601 time") from error
