"""What the browser test needs around the page: Debian's Chromium, a free port, a Streamlit
server that answers, and an element's box once it stops moving."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_S = 90


def require_browser() -> None:
    """Skip (or, when CI demands a browser, fail) without the system Chromium."""
    if CHROMIUM.is_file():
        return
    reason = f"{CHROMIUM} not found: install Debian's chromium (apt-get install -y chromium)"
    if os.environ.get("LOOPBUDGET_REQUIRE_BROWSER") == "1":
        pytest.fail(f"LOOPBUDGET_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Poll Streamlit's health endpoint until it answers or the server dies."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"streamlit exited with {server.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"streamlit did not answer within {STARTUP_S} s:\n{log.read_text()}")


def settled_box(locator: Any) -> dict[str, float]:
    """The element's box once two readings a quarter second apart agree (Vega redraws a
    chart when its container's width changes)."""
    previous = None
    for _ in range(40):
        box = locator.bounding_box()
        if box is not None and box == previous:
            return box
        previous = box
        time.sleep(0.25)
    raise AssertionError(f"the chart kept moving: {previous}")


def inside(box: dict[str, float], outer: dict[str, float], slack_px: float = 1.0) -> bool:
    return (
        box["x"] >= outer["x"] - slack_px
        and box["y"] >= outer["y"] - slack_px
        and box["x"] + box["width"] <= outer["x"] + outer["width"] + slack_px
        and box["y"] + box["height"] <= outer["y"] + outer["height"] + slack_px
    )
