"""The dashboard in a real browser: ``streamlit run app.py`` driven by Debian's Chromium.

Skipped when /usr/bin/chromium is missing, unless LOOPBUDGET_REQUIRE_BROWSER=1
(as in CI), which turns a missing browser into a failure.  With
LOOPBUDGET_DOCS_SCREENSHOT=1 the first view is also saved as docs/img/dashboard.png.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
DOCS_SCREENSHOT = ROOT / "docs" / "img" / "dashboard.png"
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
VIEWPORT = {"width": 1600, "height": 1000}
REDUCTION = '[data-testid="stMetricValue"]'
DECODE_SLIDER = 'input[type="range"][aria-label="decode speed (tokens/s)"]'


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


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port; yields its URL."""
    require_browser()
    folder = tmp_path_factory.mktemp("dashboard")
    log = folder / "streamlit.log"
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--server.headless=true",
        "--server.fileWatcherType=none",
        "--browser.gatherUsageStats=false",
        "--client.toolbarMode=minimal",
    ]
    with log.open("wb") as output:
        server = subprocess.Popen(command, cwd=folder, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_moving_decode_speed_changes_the_shown_reduction(dashboard: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(dashboard)
            reduction = page.locator(REDUCTION).first
            expect(reduction).to_have_text(re.compile(r"^\d+\.\d%$"), timeout=STARTUP_S * 1000)
            expect(page.locator(".vega-embed").first).to_be_visible(timeout=30_000)
            before = reduction.inner_text()
            first_view = tmp_path / "dashboard.png"
            page.screenshot(path=str(first_view))
            if os.environ.get("LOOPBUDGET_DOCS_SCREENSHOT") == "1":
                DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                DOCS_SCREENSHOT.write_bytes(first_view.read_bytes())

            slider = page.locator(DECODE_SLIDER)
            slider.focus()
            slider.press("Home")
            expect(page.locator('[data-testid="stSliderThumbValue"]').first).to_have_text("30")
            expect(reduction).not_to_have_text(before, timeout=30_000)
            after = reduction.inner_text()
            page.screenshot(path=str(tmp_path / "dashboard-30tps.png"))
        finally:
            browser.close()
    assert float(after.rstrip("%")) < float(before.rstrip("%"))
    assert first_view.read_bytes().startswith(b"\x89PNG")
