"""Reading what a user hands in as text: files, TOML and JSON, refused in one line when bad.

A file must be a regular file no larger than the input cap and UTF-8 text; TOML
and JSON must nest arrays and tables at most ``MAX_NESTING`` deep and hold no
number of more than ``MAX_NUMBER_DIGITS`` digits.  Both are measured on the
text before parsing, because the parsers recurse once per level (a few
thousand levels exhaust Python's stack) and Python refuses to convert an
integer of more than 4,300 digits.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from models.errors import ScenarioError
from models.limits import INPUT_SIZE, MAX_NESTING
from models.numbers import digits_problem, longest_digit_run

_STRUCTURE = re.compile(r"[\"'#\[\]{}]")
_BASIC_END = re.compile(r'\\.|"', re.DOTALL)
_MULTILINE_BASIC_END = re.compile(r'\\.|"""', re.DOTALL)


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of the file at ``path``; ``what`` names it in errors (e.g. "sweep file")."""
    if not path.exists():
        raise ScenarioError(f"{what} = {str(path)!r}: no such file")
    if not path.is_file():
        raise ScenarioError(f"{what} = {str(path)!r}: not a regular file")
    limit = INPUT_SIZE.limit()
    try:
        with path.open("rb") as file:
            content = file.read(int(limit) + 1)
    except OSError as error:
        raise ScenarioError(f"{what} = {str(path)!r}: cannot be read ({error.strerror})") from None
    if len(content) > limit:
        raise ScenarioError(
            f"{what} = {str(path)!r}: larger than the {INPUT_SIZE.what} cap of "
            f"{limit / INPUT_SIZE.scale:g} {INPUT_SIZE.unit}; raise it with "
            f"{INPUT_SIZE.env}=N if the file is meant to be this large"
        )
    return decode_utf8(content, str(path))


def decode_utf8(content: bytes, where: str) -> str:
    """``content`` as text, or a one-line error naming the first byte that is not UTF-8."""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ScenarioError(
            f"{where}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """A TOML document as a table; too deep or invalid input is a one-line error."""
    check_text(text, where)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{where}: invalid TOML: {error}") from None


def parse_json(text: str, where: str) -> Any:
    """A JSON document; too deep or invalid input is a one-line error."""
    check_text(text, where)
    try:
        return json.loads(text)
    except ValueError as error:
        raise ScenarioError(f"{where}: invalid JSON: {error}") from None


def check_text(text: str, where: str) -> None:
    """Refuse text the parsers cannot take: arrays and tables nested deeper than
    ``MAX_NESTING``, or a number of more than ``MAX_NUMBER_DIGITS`` digits."""
    depth, digits = structure(text)
    if depth > MAX_NESTING:
        raise ScenarioError(
            f"{where}: arrays and tables nested {depth} deep; at most {MAX_NESTING} levels"
        )
    problem = digits_problem(digits)
    if problem is not None:
        raise ScenarioError(f"{where}: {problem}")


def structure(text: str) -> tuple[int, int]:
    """Deepest nesting of ``[`` and ``{``, and the longest run of digits, outside strings and
    comments (TOML or JSON).

    Upper bounds for valid input: a parser stops at the first character that does not
    fit, so what follows an invalid character is never parsed.
    """
    depth = deepest = digits = 0
    position, end = 0, len(text)
    while (found := _STRUCTURE.search(text, position)) is not None:
        digits = max(digits, longest_digit_run(text[position : found.start()]))
        char, position = found.group(), found.end()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == "#":
            newline = text.find("\n", position)
            position = end if newline < 0 else newline + 1
        elif char == "'":
            closing = "'''" if text.startswith("''", position) else "'"
            start = position + len(closing) - 1
            close = text.find(closing, start)
            position = end if close < 0 else close + len(closing)
        else:
            multiline = text.startswith('""', position)
            pattern = _MULTILINE_BASIC_END if multiline else _BASIC_END
            position += 2 if multiline else 0
            position = _after_basic_string(text, position, pattern)
    digits = max(digits, longest_digit_run(text[position:]))
    return deepest, digits


def _after_basic_string(text: str, position: int, pattern: re.Pattern[str]) -> int:
    """Where a basic string that starts at ``position`` ends (backslash escapes skipped)."""
    while (found := pattern.search(text, position)) is not None:
        position = found.end()
        if not found.group().startswith("\\"):
            return position
    return len(text)
