"""The corpus of bad input (``data/bad/cases.toml``): every case, and its name in a test id."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

BAD = Path(__file__).parent / "data" / "bad"
CASES: list[dict[str, Any]] = tomllib.loads((BAD / "cases.toml").read_text())["case"]


def case_id(case: dict[str, Any]) -> str:
    return f"{case['row']}: {case['id']}"
