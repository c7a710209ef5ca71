"""Numbers as a user writes them: one parser, with a limit on digits, for every input path.

Python refuses to convert an integer of more than 4,300 digits
(``ValueError: Exceeds the limit (4300 digits)``), and ``float`` turns a long
enough literal into ``inf``: a file, a ``--set`` value, an option, a sweep,
``plot --where``, an upload or the Python API handing over such a number
ended in a traceback or an "inf" nobody wrote.  No value of a scenario needs
more than ``MAX_NUMBER_DIGITS`` digits, so longer numbers are refused, by
name, before any conversion: in text (``digits_problem``, which
``models.text_input`` runs over a document outside its strings), in an
option (``parse_number``) and in a Python value (``check_value``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from models.errors import ScenarioError

MAX_NUMBER_DIGITS = 64
"""Most digits of one number (a seed is at most 20, a float at most 17 significant)."""
_DIGIT_RUN = re.compile(r"\d[\d_]*")
_SHOWN_CHARS = 40


def longest_digit_run(text: str) -> int:
    """Digits in the longest run of digits (TOML's ``_`` separators not counted)."""
    return max((len(m.group().replace("_", "")) for m in _DIGIT_RUN.finditer(text)), default=0)


def digits_problem(digits: int) -> str | None:
    """What is wrong with a number of ``digits`` digits, if anything."""
    if digits > MAX_NUMBER_DIGITS:
        return f"a number of {digits:,} digits; at most {MAX_NUMBER_DIGITS}"
    return None


def parse_number(text: str, kind: type, what: str) -> int | float:
    """``text`` as an ``int`` or a finite ``float``; a one-line error naming ``what``."""
    problem = digits_problem(longest_digit_run(text))
    if problem is not None:
        raise ScenarioError(f"{what} = {quoted(text)}: {problem}")
    try:
        value = kind(text.strip())
    except ValueError:
        wanted = "an integer" if kind is int else "a number"
        raise ScenarioError(f"{what} = {quoted(text)}: not {wanted}") from None
    if kind is float and not math.isfinite(value):
        raise ScenarioError(f"{what} = {quoted(text)}: must be a finite number")
    return value


def check_value(value: Any, what: str) -> None:
    """Refuse a Python value holding an integer of too many digits (checked by its size in
    bits, never converted to text); tables and lists are checked throughout."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        digits = math.ceil(value.bit_length() * math.log10(2))
        if digits > MAX_NUMBER_DIGITS:
            raise ScenarioError(
                f"{what}: an integer of about {digits:,} digits; at most {MAX_NUMBER_DIGITS}"
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_value(item, f"{what}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_value(item, f"{what}[{index}]")


def shown(text: str) -> str:
    """``text`` as a message quotes it, cut to a few dozen characters."""
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[: _SHOWN_CHARS - 3]}... ({len(text):,} characters)"


def quoted(text: str) -> str:
    """``text`` quoted as a message shows a value, cut to a few dozen characters."""
    return repr(text) if len(text) <= _SHOWN_CHARS else shown(text)
