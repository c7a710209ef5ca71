"""One "65 tokens/s flagship" case (sim.analysis.flagship), the same number wherever it is
quoted: the README, the dashboard's Amdahl view and lesson 1 (the Amdahl sweep's plot
label is checked in test_sweep_questions)."""

from __future__ import annotations

from pathlib import Path

from app_support import assert_clean
from streamlit.testing.v1 import AppTest

from models.loading import load_scenario
from models.published import DECODE_MARKS, FLAGSHIP_DECODE_TPS
from sim.analysis.flagship import flagship_reduction, flagship_scenario
from sim.analytic.agent.engine import expect
from sim.turn.transports import Transport

ROOT = Path(__file__).resolve().parents[1]


def test_the_case_is_codex_spark_at_a_constant_65_tokens_per_s() -> None:
    scenario = flagship_scenario()
    assert FLAGSHIP_DECODE_TPS == 65.0 and FLAGSHIP_DECODE_TPS in DECODE_MARKS
    assert scenario.inference.decode_tps.kind == "constant"
    assert scenario.inference.decode_tps.mean == 65.0
    preset = load_scenario("codex-spark")
    assert scenario.workload == preset.workload and scenario.api == preset.api
    http, ws = (expect(scenario, t).e2e_s for t in (Transport.HTTP, Transport.WS))
    assert flagship_reduction() == 1 - ws / http
    assert 0.09 < flagship_reduction() < 0.11, "Amdahl: a small share of a decode-bound turn"


def test_the_readme_and_lesson_1_quote_it() -> None:
    quoted = f"{flagship_reduction():.1%}"
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"the same model gives {quoted} for the 65 tokens/s flagship" in readme
    lesson = " ".join((ROOT / "notebooks" / "01_amdahl.py").read_text().split())
    assert f"{quoted} at 65 tokens/s (the flagship case)" in lesson


def test_the_dashboard_quotes_it(app: AppTest) -> None:
    assert_clean(app)
    quoted = f"ws saves {flagship_reduction():.1%} end to end"
    assert any(quoted in caption.value for caption in app.caption)
