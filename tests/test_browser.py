"""The dashboard in a real browser: ``streamlit run app.py`` driven by Debian's Chromium.

At 1400x900 and at 800x900, every view's charts lie inside the viewport with their
legends visible, and no label on the page is cut short; a screenshot of every view at
both sizes is kept in build/screenshots/ (LOOPBUDGET_SCREENSHOTS overrides it).  Skipped
when /usr/bin/chromium is missing, unless LOOPBUDGET_REQUIRE_BROWSER=1 (as in CI), which
turns a missing browser into a failure.  With LOOPBUDGET_DOCS_SCREENSHOT=1 the budget
view at 1400x900 is also saved as docs/img/dashboard.png, the README's picture.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    STARTUP_S,
    free_port,
    inside,
    require_browser,
    settled_box,
    wait_until_healthy,
)

from models.stages import POOLS
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
DOCS_SCREENSHOT = ROOT / "docs" / "img" / "dashboard.png"
SCREENSHOTS = Path(os.environ.get("LOOPBUDGET_SCREENSHOTS", ROOT / "build" / "screenshots"))
VIEWPORTS = {"1400x900": {"width": 1400, "height": 900}, "800x900": {"width": 800, "height": 900}}
CHARTS_PER_VIEW = {
    "Budget": 1,
    "One rollout": 1,
    "Amdahl: decode speed": 1,
    "Scaling: turns": 2,
    "Load": 2 + len(POOLS),
    "Sweeps": 0,
}
"""The Vega-Lite charts each view draws on the default preset (the sweep view draws an
image of the sweep in the results directory the fixture writes)."""
REDUCTION = '[data-testid="stMetricValue"]'
DECODE_SLIDER = 'input[type="range"][aria-label="decode speed (tokens/s)"]'
SLIDER_VALUE = '[data-testid="stSliderThumbValue"]'
SWEEP = """\
name = "decode"
description = "ws against http over decode speed"
base = "codex-spark"
transports = ["http", "ws"]
engine = "analytic"

[[axes]]
path = "inference.decode_tps"
values = [65.0, 250.0, 1000.0, 4000.0]
"""
TRUNCATED_TEXT = """(root) => {
  const cut = [];
  for (const element of root.querySelectorAll('*')) {
    const style = getComputedStyle(element);
    const text = (element.innerText || '').trim();
    if (style.textOverflow === 'ellipsis' && text && element.offsetParent !== null
        && element.scrollWidth > element.clientWidth + 1) {
      cut.push(text);
    }
  }
  return cut;
}"""
"""The texts on the page that CSS cuts short with an ellipsis."""


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``streamlit run app.py`` on a free loopback port, in a directory holding one sweep's
    results; yields its URL."""
    require_browser()
    folder = tmp_path_factory.mktemp("dashboard")
    sweep_file = folder / "decode.toml"
    sweep_file.write_text(SWEEP)
    run_sweep(load_sweep(sweep_file), folder / "results" / "decode", workers=0)
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


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, with an empty profile."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def opened(browser: Any, url: str, viewport: dict[str, int]) -> Any:
    """The dashboard in a new page of ``viewport``'s size, its first numbers drawn."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=viewport)
    page.goto(url)
    reduction = page.locator(REDUCTION).first
    expect(reduction).to_have_text(re.compile(r"^\d+\.\d%$"), timeout=STARTUP_S * 1000)
    return page


def check_view(page: Any, view: str, size: str) -> list[str]:
    """Show ``view``; every chart in it inside the viewport with its legends; a screenshot
    per chart (or one of the view). Returns what is wrong."""
    from playwright.sync_api import expect

    viewport = page.viewport_size
    screen = {"x": 0, "y": 0, "width": viewport["width"], "height": viewport["height"]}
    page.get_by_role("tab", name=view).click()
    panel = page.locator('[role="tabpanel"]:visible')
    charts = panel.locator(".vega-embed")
    expected = CHARTS_PER_VIEW[view]
    expect(charts).to_have_count(expected, timeout=60_000)
    problems = []
    stem = re.sub(r"[^a-z0-9]+", "-", view.lower()).strip("-")
    for index in range(expected):
        chart = charts.nth(index)
        drawing = chart.locator("svg.marks")
        expect(drawing).to_be_visible(timeout=30_000)
        drawing.scroll_into_view_if_needed()
        box = settled_box(drawing)
        if not inside(box, screen):
            problems.append(f"{view} chart {index}: {box} leaves the {size} viewport")
        if not inside(box, chart.bounding_box()):
            problems.append(f"{view} chart {index}: {box} is clipped by its container")
        legends = drawing.locator("g.role-legend")
        if legends.count() == 0:
            problems.append(f"{view} chart {index}: no legend")
        # What a reader sees of a legend: its title, labels and symbols (the group's own
        # box also holds an invisible background).
        marks = drawing.locator("g.role-legend text, g.role-legend-symbol path")
        for number in range(marks.count()):
            mark = marks.nth(number).bounding_box()
            if mark is None or mark["width"] == mark["height"] == 0:
                continue  # an empty text: nothing to see or to cut
            if not inside(mark, box):
                problems.append(f"{view} chart {index}: legend part {mark} outside {box}")
            elif not inside(mark, screen):
                problems.append(f"{view} chart {index}: legend part {mark} off screen")
        words = drawing.locator("text")
        for number in range(words.count()):
            word = words.nth(number).bounding_box()
            if word and word["width"] > 0 and not inside(word, box):
                problems.append(f"{view} chart {index}: text {word} leaves its chart {box}")
        texts = words.evaluate_all("(all) => all.map((t) => t.textContent)")
        shortened = [text for text in texts if text.endswith("…")]
        if shortened:
            problems.append(f"{view} chart {index}: labels cut short: {shortened}")
        page.screenshot(path=str(SCREENSHOTS / f"{size}-{stem}-{index + 1}.png"))
    if expected == 0:
        image = panel.locator('[data-testid="stImage"] img').first
        expect(image).to_be_visible(timeout=60_000)
        image.scroll_into_view_if_needed()
        box = settled_box(image)
        if not inside(box, screen):
            problems.append(f"{view} image: {box} leaves the {size} viewport")
        page.screenshot(path=str(SCREENSHOTS / f"{size}-{stem}.png"))
    cut = page.locator('[data-testid="stMain"]').evaluate(TRUNCATED_TEXT)
    problems += [f"{view}: {text!r} is cut short" for text in cut]
    return problems


@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_every_chart_and_legend_fits_the_screen_in_every_view(
    dashboard: str, browser: Any, size: str
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = opened(browser, dashboard, VIEWPORTS[size])
    problems = []
    for view in CHARTS_PER_VIEW:
        problems += check_view(page, view, size)
        if view == "Budget" and size == "1400x900":
            page.locator("h1").first.scroll_into_view_if_needed()
            first_view = SCREENSHOTS / "dashboard.png"
            page.screenshot(path=str(first_view))
            if os.environ.get("LOOPBUDGET_DOCS_SCREENSHOT") == "1":
                DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(first_view, DOCS_SCREENSHOT)
    main = page.locator('[data-testid="stMain"]')
    overflow = main.evaluate("(m) => m.scrollWidth - m.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow} px"
    assert problems == [], "\n".join(problems)


def test_the_decode_slider_shows_the_presets_speed_and_moves_the_reduction(
    dashboard: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = opened(browser, dashboard, VIEWPORTS["1400x900"])
    reduction = page.locator(REDUCTION).first
    slider = page.locator(DECODE_SLIDER)
    value = page.locator(SLIDER_VALUE).first
    expect(value).to_have_text("1,000")
    before = reduction.inner_text()
    slider.focus()
    slider.press("Home")
    expect(value).to_have_text("30")
    expect(reduction).not_to_have_text(before, timeout=30_000)
    after = reduction.inner_text()
    assert float(after.rstrip("%")) < float(before.rstrip("%"))
