"""Helpers of the testbed tests: every live run's result can be kept for the docs' tables."""

from __future__ import annotations

import json
import os

from sim.testbed.results import LiveResult

REPORT_ENV = "LOOPBUDGET_TESTBED_REPORT"
"""A file to which each live run's JSON is appended (one line a run), when set."""


def kept(result: LiveResult) -> LiveResult:
    """``result``, appended to the report file when ``LOOPBUDGET_TESTBED_REPORT`` names one."""
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "a") as report:
            report.write(json.dumps(result.to_json()) + "\n")
    return result
