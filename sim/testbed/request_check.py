"""A request as the Responses API checks it before any work: JSON, then the fields' types.

Every field the emulator reads is checked here, so a badly typed request is
a 400 ``invalid_request_error`` naming its ``param`` (as the service answers),
never an exception inside the server: the text is strict JSON (no ``NaN`` or
``Infinity``, arrays and objects nested at most ``MAX_JSON_DEPTH`` deep, UTF-8),
and the body's fields have the types of the SDK's ``ResponseCreateParams``.
"""

from __future__ import annotations

import json
from typing import Any

from models.numbers import digits_problem
from models.text_input import structure
from sim.testbed.protocol import ApiError
from sim.testbed.script import REPLICATION_KEY, ROLLOUT_KEY

MAX_JSON_DEPTH = 64
"""Deepest nesting of a request's arrays and objects (tool schemas nest a few levels)."""
METADATA_PAIRS = 16
METADATA_KEY_CHARS = 64
METADATA_VALUE_CHARS = 512
"""The service's limits on ``metadata``: 16 pairs of string keys and string values."""
MAX_ROLLOUT = 2**31 - 1
"""Largest rollout or replication number a client may name in the metadata."""
_TEXT_PARTS = ("content", "output", "summary")


def parse_body(data: str | bytes) -> dict[str, Any]:
    """A request body as an object; anything else is a 400 naming what is wrong."""
    try:
        text = data.decode() if isinstance(data, bytes) else data
    except UnicodeDecodeError as error:
        raise invalid_json(f"not UTF-8 at byte {error.start}") from None
    depth, digits = structure(text)
    if depth > MAX_JSON_DEPTH:
        raise invalid_json(f"nested {depth:,} deep; at most {MAX_JSON_DEPTH} levels")
    problem = digits_problem(digits)
    if problem is not None:
        raise invalid_json(problem)
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise invalid_json(f"{error.msg} at line {error.lineno} column {error.colno}") from None
    except ValueError as error:
        raise invalid_json(str(error).split(";")[0]) from None
    if not isinstance(body, dict):
        raise invalid_json("the body must be a JSON object")
    return body


def invalid_json(why: str) -> ApiError:
    return ApiError(400, "invalid_json", f"The request is not valid JSON: {why}.")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_create(body: dict[str, Any]) -> None:
    """The types of every field of a ``response.create`` the emulator reads."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        if "model" not in body:
            raise ApiError(400, "missing_required_parameter", "Missing 'model'.", "model")
        raise _type("model", "a non-empty string")
    _optional(body, "instructions", str, "a string")
    _optional(body, "previous_response_id", str, "a string")
    for flag in ("stream", "store", "generate"):
        _optional(body, flag, bool, "a boolean")
    _check_tools(body.get("tools"))
    _check_input(body.get("input"))
    _check_metadata(body.get("metadata"))


def rollout_numbers(metadata: dict[str, str]) -> tuple[int, int] | None:
    """(rollout, replication) the client names in its metadata, if it names one."""
    if ROLLOUT_KEY not in metadata:
        return None
    numbers = []
    for key in (ROLLOUT_KEY, REPLICATION_KEY):
        text = metadata.get(key, "0")
        if not (text.isascii() and text.isdigit() and int(text) <= MAX_ROLLOUT):
            raise ApiError(
                400,
                "invalid_value",
                f"metadata.{key} = {text[:32]!r}: must be an integer from 0 to {MAX_ROLLOUT}.",
                f"metadata.{key}",
            )
        numbers.append(int(text))
    return numbers[0], numbers[1]


def _type(param: str, wanted: str) -> ApiError:
    return ApiError(400, "invalid_type", f"Invalid type for '{param}': expected {wanted}.", param)


def _optional(table: dict[str, Any], key: str, kind: type, wanted: str, where: str = "") -> None:
    if table.get(key) is not None and not isinstance(table[key], kind):
        raise _type(f"{where}{key}", wanted)


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _type("tools", "an array of objects")
    for index, tool in enumerate(tools):
        where = f"tools[{index}]."
        if not isinstance(tool, dict):
            raise _type(f"tools[{index}]", "an object")
        for key in ("type", "name", "description"):
            _optional(tool, key, str, "a string", where)
        _optional(tool, "parameters", dict, "an object", where)


def _check_input(value: Any) -> None:
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list):
        raise _type("input", "a string or an array of items")
    for index, item in enumerate(value):
        where = f"input[{index}]."
        if not isinstance(item, dict):
            raise _type(f"input[{index}]", "an object")
        for key in ("type", "role", "call_id", "arguments", "name", "id"):
            _optional(item, key, str, "a string", where)
        for key in _TEXT_PARTS:
            _check_text(item.get(key), f"{where}{key}")


def _check_text(value: Any, param: str) -> None:
    """Text: a string, or an array of parts whose ``text`` is a string."""
    if value is None or isinstance(value, str):
        return
    if not isinstance(value, list):
        raise _type(param, "a string or an array of content parts")
    for index, part in enumerate(value):
        if not isinstance(part, dict):
            raise _type(f"{param}[{index}]", "an object")
        _optional(part, "text", str, "a string", f"{param}[{index}].")


def _check_metadata(metadata: Any) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise _type("metadata", "an object of string values")
    if len(metadata) > METADATA_PAIRS:
        raise ApiError(
            400,
            "invalid_value",
            f"metadata has {len(metadata)} pairs; at most {METADATA_PAIRS}.",
            "metadata",
        )
    for key, value in metadata.items():
        if len(key) > METADATA_KEY_CHARS:
            raise ApiError(
                400,
                "invalid_value",
                f"metadata key {key[:32]!r}...: at most {METADATA_KEY_CHARS} characters.",
                "metadata",
            )
        if not isinstance(value, str):
            raise _type(f"metadata.{key[:METADATA_KEY_CHARS]}", "a string")
        if len(value) > METADATA_VALUE_CHARS:
            raise ApiError(
                400,
                "invalid_value",
                f"metadata.{key}: at most {METADATA_VALUE_CHARS} characters.",
                f"metadata.{key}",
            )
    rollout_numbers(metadata)
