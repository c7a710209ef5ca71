"""What a newcomer met in the dashboard, each fixed and kept fixed: text big enough for a
projector, the slope caption's story, distinct upload and download colours, a budget table
without a scroll box, the sweep explorer on a one-at-a-time sweep, the preset box during an
upload, a download button whose label fits, "still the largest share", and downloads of charts,
tables and records."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import streamlit
from app_support import APP, TIMEOUT_S, assert_clean, button, upload
from streamlit.testing.v1 import AppTest

from models.loading import load_scenario
from models.stages import STAGES, Stage
from sim.dashboard import charts, data, downloads, load_charts
from sim.dashboard.slopes import SLOPE_CALLS, local_slope, slopes
from sim.sweep.execute import run_sweep
from sim.sweep.sweepfile import load_sweep
from sim.turn.transports import Transport

pytestmark = pytest.mark.slow

MIN_PX = 14


def font_sizes(spec: Any, path: str = "") -> list[tuple[str, float]]:
    """Every font size set anywhere in a Vega-Lite spec, with where it is."""
    found = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key.lower().endswith("fontsize") and isinstance(value, int | float):
                found.append((f"{path}.{key}", value))
            found.extend(font_sizes(value, f"{path}.{key}"))
    elif isinstance(spec, list):
        for index, value in enumerate(spec):
            found.extend(font_sizes(value, f"{path}[{index}]"))
    return found


def every_chart() -> dict[str, Any]:
    scenario = load_scenario("codex-spark")
    transports = data.DEFAULT_TRANSPORTS
    results = data.evaluate(scenario, transports)
    from sim.dashboard import load as fleet

    latency, utilization = fleet.analytic_frames(scenario, transports, 50)
    return {
        "budget": charts.budget_chart(data.budget_frame(results)).chart,
        "rollout": charts.rollout_chart(data.rollout_frame(scenario, transports)).chart,
        "amdahl": charts.amdahl_chart(
            data.amdahl_frame(scenario, transports, 4),
            data.amdahl_point(results, 1000.0),
            "http",
        ),
        **dict(
            zip(
                ("scaling-api-work", "scaling-e2e"),
                charts.scaling_charts(data.scaling_frame(scenario, transports, 4), 30),
                strict=True,
            )
        ),
        **dict(zip(("load-e2e", "load-ttft"), load_charts.latency_charts(latency), strict=True)),
        **{
            f"load-{pool}": chart
            for pool, chart in load_charts.utilization_charts(utilization).items()
        },
    }


@pytest.mark.parametrize("name", list(every_chart()))
def test_every_chart_sets_its_text_at_14_px_or_more(name: str) -> None:
    spec = every_chart()[name].to_dict()
    config = spec["config"]
    for part in ("axis", "legend"):
        for key in ("labelFontSize", "titleFontSize"):
            assert config[part][key] >= MIN_PX, (part, key)
    small = [(where, px) for where, px in font_sizes(spec) if px < MIN_PX]
    assert small == []


def test_the_page_draws_charts_in_their_own_fonts_and_captions_at_14_px(app: AppTest) -> None:
    charts_drawn = app.get("vega_lite_chart")
    assert charts_drawn and all(chart.proto.theme == "" for chart in charts_drawn)
    (style,) = [h.proto.body for h in app.get("html") if "stCaptionContainer" in h.proto.body]
    sizes = [int(px) for px in re.findall(r"font-size: (\d+)px", style)]
    assert sizes and min(sizes) >= MIN_PX
    assert "stMetricDelta" in style


def test_the_slope_caption_tells_the_models_story_with_its_numbers(app: AppTest) -> None:
    scenario = load_scenario("codex-spark")
    (http_low, http_high), (ws_low, ws_high) = slopes(
        scenario, (Transport.HTTP, Transport.WS)
    ).values()
    assert 1.3 < http_low < 1.5 < http_high < 1.8, "1.4 to 1.7 over 20-80 calls"
    assert local_slope(scenario, Transport.HTTP, 2000) > 1.95, "it tends to 2"
    assert 0.85 < ws_low < ws_high < 1.05
    (caption,) = [c.value for c in app.caption if "log-log slope" in c.value]
    low, high = SLOPE_CALLS
    assert f"http {http_low:.2f} at {low} calls, {http_high:.2f} at {high}" in caption
    assert "tends to 2 only" in caption and "close to 2" not in caption
    page = (Path(APP).parent / "docs" / "dashboard.md").read_text()
    assert "close to 2 for per-request HTTP" not in page


def delta_e(first: str, second: str) -> float:
    """CIE76 colour difference of two hex colours (about 2 is just noticeable)."""

    def lab(colour: str) -> tuple[float, float, float]:
        linear = []
        for i in (1, 3, 5):
            c = int(colour[i : i + 2], 16) / 255
            linear.append(((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92)
        r, g, b = linear
        xyz = (
            (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
            0.2126 * r + 0.7152 * g + 0.0722 * b,
            (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
        )
        x, y, z = (v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz)
        return 116 * y - 16, 500 * (x - y), 200 * (y - z)

    return sum((a - b) ** 2 for a, b in zip(lab(first), lab(second), strict=True)) ** 0.5


def test_upload_and_download_have_clearly_different_colours() -> None:
    assert delta_e(Stage.UPLOAD.colour, Stage.DOWNLOAD.colour) > 30
    for a, b in itertools.combinations(STAGES, 2):
        assert delta_e(a.colour, b.colour) > 10, (a, b)


def test_the_budget_table_shows_every_row_without_a_scroll_box(monkeypatch) -> None:
    heights = []
    original = streamlit.dataframe

    def record(*args, **kwargs):
        heights.append(kwargs.get("height"))
        return original(*args, **kwargs)

    monkeypatch.setattr(streamlit, "dataframe", record)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    rows = len(at.dataframe[0].value)
    assert isinstance(heights[0], int) and heights[0] >= (rows + 1) * data.TABLE_ROW_PX


TORNADO = """\
name = "oat"
base = "codex-spark"
transports = ["http", "ws"]
design = "one-at-a-time"

[[axes]]
path = "network.rtt_ms"
values = [15.0, 60.0]

[[axes]]
path = "api.post_fixed_ms"
values = [12.5, 50.0]

[[axes]]
path = "api.validate_per_item_ms"
values = [0.25, 1.0]
"""


def test_a_one_at_a_time_sweep_opens_as_a_tornado(tmp_path: Path, monkeypatch) -> None:
    source = tmp_path / "oat.toml"
    source.write_text(TORNADO)
    run_sweep(load_sweep(source), tmp_path / "results" / "oat", workers=0)
    monkeypatch.chdir(tmp_path)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT_S).run()
    assert_clean(at)
    kinds = [s for s in at.selectbox if s.label == "plot"]
    assert kinds[0].value == "tornado" and kinds[0].options == ["tornado"]
    assert not [s for s in at.select_slider if s.key and s.key.startswith("where:")]
    assert at.get("imgs") or at.get("image")


def test_the_preset_box_names_the_uploaded_scenario(app: AppTest) -> None:
    text = b'extends = "codex-spark"\nname = "mine"\n[network]\nrtt_ms = 90.0\n'
    upload(app, "mine.toml", text)
    assert_clean(app)
    assert app.selectbox(key="preset").value == "uploaded: mine.toml"
    app.selectbox(key="preset").set_value("gpt5-flagship").run()
    assert app.selectbox(key="preset").value == "gpt5-flagship"
    assert "uploaded: mine.toml" not in app.selectbox(key="preset").options


def test_the_scenario_download_spans_the_sidebar(app: AppTest) -> None:
    def path_to(node: Any, label: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if getattr(node, "type", None) == "download_button" and node.proto.label == label:
            return path
        for child in (getattr(node, "children", None) or {}).values():
            found = path_to(child, label, (*path, getattr(child, "type", "")))
            if found is not None:
                return found
        return None

    where = path_to(app.sidebar, "Download the scenario (TOML)", ())
    assert where is not None and "column" not in where, "a half-width column cuts its label"


def test_the_dashboard_says_still_the_largest_share(app: AppTest) -> None:
    app.multiselect(key="transports").set_value(["http", "http-full"]).run()
    verdicts = [b.value for b in app.markdown if "largest share" in b.value]
    expected = "tool execution on the client is still the largest share of http-full"
    assert any(expected in v for v in verdicts), verdicts


def test_charts_download_as_png_and_svg() -> None:
    chart = every_chart()["budget"]
    assert downloads.chart_png(chart).startswith(b"\x89PNG")
    assert b"<svg" in downloads.chart_svg(chart)[:500]


def test_every_chart_is_a_single_view_that_takes_the_width_of_its_place() -> None:
    """A concatenated or faceted chart has a width of its own and overflows a narrow page;
    a single view stretches to its column, its legend inside it."""
    for name, chart in every_chart().items():
        spec = chart.to_dict()
        assert not {"hconcat", "vconcat", "concat", "facet"} & set(spec), name
        assert "width" not in spec, name


def test_the_page_offers_chart_table_and_record_downloads(app: AppTest) -> None:
    labels = [d.proto.label for d in app.get("download_button")]
    assert sum(label.endswith("chart (PNG)") for label in labels) >= 6
    assert sum(label.endswith("chart (SVG)") for label in labels) >= 6
    assert "the budget table (CSV)" in labels
    assert len(set(labels)) == len(labels), "every download button says what it downloads"
    button(app, "Simulate (DES)").click().run()
    assert_clean(app)
    labels = [d.proto.label for d in app.get("download_button")]
    assert "rollout records (PARQUET)" in labels
