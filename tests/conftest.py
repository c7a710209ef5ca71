"""Shared fixtures: the ``loopbudget`` command line run in-process, the dashboard headless."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from app_support import APP, TIMEOUT_S
from streamlit.testing.v1 import AppTest
from support import CliResult

from sim.cli.app import main


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


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The dashboard after its first run, on the default preset, in an empty directory
    (so no local sweep results show up)."""
    monkeypatch.chdir(tmp_path)
    return AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
