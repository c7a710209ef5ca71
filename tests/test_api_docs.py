"""docs/api.md's examples run: every ``python`` block, in order, in one namespace, from the
repository's root (as a reader pastes them into a notebook)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCK.findall(PAGE.read_text())) >= 6


@pytest.mark.slow
def test_every_example_of_docs_api_runs(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for number, code in enumerate(BLOCK.findall(PAGE.read_text()), start=1):
        exec(compile(code, f"{PAGE.name} example {number}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "ws saves" in printed and "s per rollout" in printed
