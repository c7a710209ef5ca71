"""The normalised per-request table every trace reader produces and every writer takes.

One row per model request (one Responses API call) of an agent's rollout.  Times
are epoch seconds (``_s``, floats, as the trace gives them); server times are
milliseconds (``_ms``); token counts are integers.  A value the trace does not
give is ``None`` (null in Arrow and Parquet), never 0.  The tool calls a
response asked for are a list column of structs on the request that asked for
them (``tool_calls``).  ``docs/traces.md`` describes the contract; it is stable:
columns are only ever added, at the end, with a null default.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields

import pyarrow as pa

TRANSPORTS = ("http", "http-full", "ws", "ws-append")
"""The transports a request may be tagged with (``None``: unknown)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a response asked for, and when the client ran it (epoch seconds)."""

    call_id: str
    tool_name: str
    start_s: float | None = None
    end_s: float | None = None

    @property
    def duration_s(self) -> float | None:
        if self.start_s is None or self.end_s is None:
            return None
        return self.end_s - self.start_s


@dataclass(frozen=True, slots=True)
class Request:
    """One model request of a rollout; see ``REQUEST_SCHEMA`` for each column's meaning."""

    rollout_id: str
    request_index: int
    start_s: float
    end_s: float
    source: str = ""
    format: str = ""
    transport: str | None = None
    first_output_s: float | None = None
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    model: str | None = None
    server_address: str | None = None
    response_id: str | None = None
    previous_response_id: str | None = None
    connection_id: str | None = None
    connection_reused: bool | None = None
    server_processing_ms: float | None = None
    server_api_overhead_ms: float | None = None
    server_engine_ms: float | None = None
    server_engine_ttft_ms: float | None = None
    error_type: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def duration_s(self) -> float:
        """From the request's start to the end of its response."""
        return self.end_s - self.start_s

    @property
    def ttft_s(self) -> float | None:
        """Time to the first output (None where the trace does not say)."""
        return None if self.first_output_s is None else self.first_output_s - self.start_s


def _column(name: str, kind: pa.DataType, doc: str, unit: str = "") -> pa.Field:
    metadata = {"description": doc, **({"unit": unit} if unit else {})}
    return pa.field(name, kind, nullable=True, metadata=metadata)


TOOL_CALL_TYPE = pa.struct(
    [
        _column("call_id", pa.string(), "the call's id (Responses API call_id)"),
        _column("tool_name", pa.string(), "the tool's name"),
        _column("start_s", pa.float64(), "when the client started the tool", "epoch s"),
        _column("end_s", pa.float64(), "when its result was ready", "epoch s"),
    ]
)

REQUEST_SCHEMA = pa.schema(
    [
        _column("rollout_id", pa.string(), "the rollout (one user task; conversation id)"),
        _column("request_index", pa.int64(), "0-based position of the request in its rollout"),
        _column("start_s", pa.float64(), "the client sent the request", "epoch s"),
        _column("end_s", pa.float64(), "the response completed (or failed)", "epoch s"),
        _column("source", pa.string(), "the trace file the row was read from"),
        _column("format", pa.string(), "the trace format the row was read as"),
        _column("transport", pa.string(), "http, http-full, ws or ws-append; null: unknown"),
        _column("first_output_s", pa.float64(), "the first output event arrived", "epoch s"),
        _column("input_tokens", pa.int64(), "prompt tokens, cached ones included", "tokens"),
        _column("cached_input_tokens", pa.int64(), "prompt tokens read from cache", "tokens"),
        _column("output_tokens", pa.int64(), "output tokens, reasoning included", "tokens"),
        _column("reasoning_tokens", pa.int64(), "reasoning output tokens", "tokens"),
        _column("model", pa.string(), "the model requested"),
        _column("server_address", pa.string(), "the API host"),
        _column("response_id", pa.string(), "the response's id"),
        _column("previous_response_id", pa.string(), "the response it continued"),
        _column("connection_id", pa.string(), "the connection (socket) it was sent on"),
        _column("connection_reused", pa.bool_(), "true: the connection had served before"),
        _column("server_processing_ms", pa.float64(), "openai-processing-ms (HTTP)", "ms"),
        _column(
            "server_api_overhead_ms",
            pa.float64(),
            "WebSocket timing: responses_duration_excl_engine_and_client_tool_time_ms",
            "ms",
        ),
        _column(
            "server_engine_ms", pa.float64(), "WebSocket timing: engine_service_total_ms", "ms"
        ),
        _column(
            "server_engine_ttft_ms",
            pa.float64(),
            "WebSocket timing: engine_service_ttft_total_ms",
            "ms",
        ),
        _column("error_type", pa.string(), "the error the request ended with; null: success"),
        _column("tool_calls", pa.list_(TOOL_CALL_TYPE), "the tool calls the response asked for"),
    ]
)
"""The table's columns in order, each with its description and unit in the field metadata."""

_SCALARS = tuple(f.name for f in fields(Request) if f.name != "tool_calls")


def to_table(requests: Iterable[Request]) -> pa.Table:
    """The requests as an Arrow table with ``REQUEST_SCHEMA`` (write it with pyarrow.parquet)."""
    rows = list(requests)
    columns: dict[str, list[object]] = {name: [getattr(r, name) for r in rows] for name in _SCALARS}
    columns["tool_calls"] = [
        [
            {"call_id": c.call_id, "tool_name": c.tool_name, "start_s": c.start_s, "end_s": c.end_s}
            for c in r.tool_calls
        ]
        for r in rows
    ]
    return pa.table(columns, schema=REQUEST_SCHEMA)


def from_table(table: pa.Table) -> Iterator[Request]:
    """The rows of a table with ``REQUEST_SCHEMA`` (e.g. read back from Parquet) as requests."""
    for row in table.select(REQUEST_SCHEMA.names).to_pylist():
        calls = tuple(ToolCall(**call) for call in row.pop("tool_calls") or ())
        yield Request(**row, tool_calls=calls)
