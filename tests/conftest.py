"""Shared fixtures: the ``loopbudget`` command line run in-process."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
from support import CliResult

from sim.cli import main


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """Run ``loopbudget ARGS...`` through its real entry point (error handling included)."""

    def invoke(*args: str) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["loopbudget", *args])
        capsys.readouterr()
        try:
            main()
            exit_code = 0
        except SystemExit as stop:
            exit_code = stop.code if isinstance(stop.code, int) else 1
        captured = capsys.readouterr()
        return CliResult(exit_code, captured.out, captured.err)

    return invoke
