"""What reading a trace found: counts, and every problem counted by kind with its first line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.errors import ScenarioError


class TraceError(ScenarioError):
    """A trace that cannot be used: one line naming the file and what is missing."""


class Malformed(ValueError):
    """One bad line or record: the message names the field, the value and what is allowed."""


@dataclass
class Problem:
    """One kind of problem: how often it occurred and where first."""

    count: int
    first_line: int
    example: str


@dataclass
class ReadReport:
    """Counts of one file's reading; problems are keyed by kind (``malformed``, ``warning``)."""

    source: str
    format: str = ""
    lines: int = 0
    bytes_read: int = 0
    requests: int = 0
    rollouts: int = 0
    tool_calls: int = 0
    malformed: dict[str, Problem] = field(default_factory=dict)
    """Lines or records that could not be read (skipped), by reason."""
    warnings: dict[str, Problem] = field(default_factory=dict)
    """Records read but dropped or repaired (a request without an end, a negative duration)."""

    def bad_line(self, line: int, reason: str, example: str) -> None:
        _count(self.malformed, line, reason, example)

    def warn(self, line: int, reason: str, example: str) -> None:
        _count(self.warnings, line, reason, example)

    @property
    def skipped(self) -> int:
        return sum(p.count for p in self.malformed.values())

    def lines_of_text(self) -> list[str]:
        """One line per kind of problem, e.g. ``3 malformed lines (not JSON), first at line 12``."""
        text = []
        for label, problems in (("malformed", self.malformed), ("warning", self.warnings)):
            for reason, p in problems.items():
                text.append(
                    f"{self.source}: {p.count} {label} ({reason}), first at line {p.first_line}: "
                    f"{p.example}"
                )
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "lines": self.lines,
            "requests": self.requests,
            "rollouts": self.rollouts,
            "tool_calls": self.tool_calls,
            "malformed": {k: vars(v) for k, v in self.malformed.items()},
            "warnings": {k: vars(v) for k, v in self.warnings.items()},
        }


def _count(problems: dict[str, Problem], line: int, reason: str, example: str) -> None:
    if reason in problems:
        problems[reason].count += 1
    else:
        problems[reason] = Problem(1, line, example[:160])


def integer(record: dict[str, Any], key: str, where: str) -> int | None:
    """``record[key]`` as a non-negative integer token count (None when absent)."""
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise Malformed(f"{where}.{key} = {value!r}: expected an integer")
    if value < 0:
        raise Malformed(f"{where}.{key} = {value!r}: expected a count >= 0")
    return int(value)


def number(record: dict[str, Any], key: str, where: str) -> float | None:
    """``record[key]`` as a float (None when absent)."""
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Malformed(f"{where}.{key} = {value!r}: expected a number")
    return float(value)


def text(record: dict[str, Any], key: str, where: str) -> str | None:
    """``record[key]`` as a string (None when absent)."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Malformed(f"{where}.{key} = {value!r}: expected a string")
    return value


def mapping(record: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``record[key]`` as an object ({} when absent)."""
    value = record.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Malformed(f"{where}.{key} = {value!r}: expected an object")
    return value
