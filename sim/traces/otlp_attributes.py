"""OTLP JSON's typed attribute values read as Python values, and the attribute names that
carry each column under the GenAI conventions' generations and OpenInference's aliases.

Every reader here raises ``Malformed`` with the field, the value and what was expected."""

from __future__ import annotations

from typing import Any

from sim.traces.report import Malformed

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


def span_times(span: dict[str, Any]) -> tuple[float | None, float | None]:
    start = span.get("startTimeUnixNano", span.get("start_time_unix_nano"))
    end = span.get("endTimeUnixNano", span.get("end_time_unix_nano"))
    return nanos(start, "startTimeUnixNano"), nanos(end, "endTimeUnixNano")


def nanos(value: Any, name: str) -> float | None:
    if value in (None, "", "0", 0):
        return None
    try:
        return int(value) / 1e9
    except (TypeError, ValueError) as error:
        raise Malformed(f"{name} = {value!r}: expected nanoseconds (an integer)") from error


def attribute_map(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        raise Malformed(f"attributes = {items!r}: expected a list of key-value pairs")
    values = {}
    for item in items:
        if not isinstance(item, dict) or "key" not in item:
            raise Malformed(f"attribute = {item!r}: expected {{key, value}}")
        values[item["key"]] = any_value(item.get("value") or {})
    return values


def any_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return as_int(value["intValue"], "intValue")
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    return None


def first_column(a: dict[str, Any], column: str) -> Any:
    return next((a[name] for name in ALIASES[column] if a.get(name) is not None), None)


def count_column(a: dict[str, Any], column: str) -> int | None:
    value = first_column(a, column)
    if value is None:
        return None
    count = as_int(value, ALIASES[column][0])
    if count < 0:
        raise Malformed(f"{ALIASES[column][0]} = {value!r}: expected a count >= 0")
    return count


def number_column(a: dict[str, Any], column: str) -> float | None:
    value = first_column(a, column)
    return None if value is None else as_float(value, ALIASES[column][0])


def float_attribute(a: dict[str, Any], name: str) -> float | None:
    value = a.get(name)
    return None if value is None else as_float(value, name)


def as_float(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise Malformed(f"{name} = {value!r}: expected a number")
    try:
        return float(value)
    except ValueError as error:
        raise Malformed(f"{name} = {value!r}: expected a number") from error


def as_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise Malformed(f"{name} = {value!r}: expected an integer")
    try:
        return int(value)
    except (TypeError, ValueError) as error:
        raise Malformed(f"{name} = {value!r}: expected an integer") from error


def as_str(value: Any) -> str | None:
    return None if value is None else str(value)


def as_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def list_field(record: dict[str, Any], *names: str) -> list[dict[str, Any]]:
    for name in names:
        value = record.get(name)
        if value is not None:
            if not isinstance(value, list):
                raise Malformed(f"{name} = {str(value)[:40]!r}: expected a list")
            return value
    return []
