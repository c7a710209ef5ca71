"""The command line's ``--quiet`` option (progress itself: ``sim.report.progress``)."""

from __future__ import annotations

from typing import Any

import click


def quiet_option(command: Any) -> Any:
    """``--quiet``: no progress on standard error (results and errors still print)."""
    return click.option(
        "--quiet", "-q", is_flag=True, help="no progress bar or progress lines on stderr"
    )(command)
