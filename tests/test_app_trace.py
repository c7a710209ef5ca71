"""The dashboard's trace view, driven headless with AppTest: an uploaded trace is read and
fitted as ``loopbudget fit`` does, its measured rollouts are shown as the trace has them
(an independent reading gives the same statistics), the fitted scenario reproduces them,
and a trace that cannot be used is one line in place of the view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_support import assert_clean
from streamlit.testing.v1 import AppTest

from models.loading import load_scenario
from sim.analysis.run import Engine, Spec, execute
from sim.report.otel import write_otlp
from sim.report.simulated_trace import run_requests
from sim.traces.read import read_requests
from sim.turn.transports import Transport

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parent / "data" / "traces" / "codex-0.66-session.jsonl"
ROLLOUTS = 300


@pytest.fixture(scope="module")
def simulated_trace(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """What ``loopbudget run codex-spark:ws --otel`` writes for 300 rollouts."""
    scenario = load_scenario("codex-spark")
    run = execute(
        Spec("codex-spark:ws", "codex-spark", Transport.WS),
        scenario,
        Engine.DES,
        ROLLOUTS,
        keep_turns=True,
    )
    path = tmp_path_factory.mktemp("trace") / "spark.otel.json"
    write_otlp(path, run_requests(run, "codex-spark:ws"))
    return path.read_bytes()


def _upload(app: AppTest, name: str, content: bytes) -> AppTest:
    uploader = app.file_uploader(key="trace:upload")
    return uploader.set_value((name, content, "application/json")).run()


def _table(app: AppTest):
    return next(
        frame.value
        for frame in app.dataframe
        if "fitted scenario" in frame.value.columns and "measured" in frame.value.columns
    )


def test_the_view_shows_the_trace_beside_its_fitted_scenario(
    app: AppTest, simulated_trace: bytes, tmp_path: Path
) -> None:
    _upload(app, "spark.otel.json", simulated_trace)
    assert_clean(app)
    table = _table(app)
    path = tmp_path / "again.otel.json"
    path.write_bytes(simulated_trace)
    requests, _ = read_requests([path])
    by_rollout: dict[str, list] = {}
    for request in requests:
        by_rollout.setdefault(request.rollout_id, []).append(request)
    e2e = np.array(
        [max(r.end_s for r in rs) - min(r.start_s for r in rs) for rs in by_rollout.values()]
    )
    ttft_ms = np.array([r.ttft_s for r in requests]) * 1e3
    assert table.loc["e2e per rollout, mean (s)", "measured"] == pytest.approx(e2e.mean())
    assert table.loc["e2e per rollout, p95 (s)", "measured"] == pytest.approx(
        np.percentile(e2e, 95)
    )
    assert table.loc["TTFT per request, p50 (ms)", "measured"] == pytest.approx(np.median(ttft_ms))
    # The calibration sets the fitted scenario's mean e2e and TTFT to the trace's; the DES's
    # 600 rollouts of it are within their sampling error (the e2e spreads by 20%: 1% of it).
    assert abs(table.loc["e2e per rollout, mean (s)", "rel. error"]) < 0.04
    assert abs(table.loc["TTFT per request, mean (ms)", "rel. error"]) < 0.04
    assert any("budget over ws" in block.value for block in app.markdown)


@pytest.mark.parametrize(
    ("name", "content", "mentions"),
    [
        ("broken.jsonl", b"{not json\n", ["broken.jsonl", "no known trace format"]),
        ("empty.jsonl", b"", ["empty.jsonl"]),
        ("spans.json", b'{"resourceSpans": []}\n', ["spans.json", "nothing usable"]),
    ],
    ids=["not-json", "empty", "no-spans"],
)
def test_a_trace_that_cannot_be_used_is_one_line(
    app: AppTest, name: str, content: bytes, mentions: list[str]
) -> None:
    _upload(app, name, content)
    assert not app.exception, [e.message for e in app.exception]
    [error] = app.error
    assert "\n" not in error.value
    for mention in mentions:
        assert mention in error.value, error.value


def test_a_trace_without_its_transport_asks_for_it(app: AppTest) -> None:
    _upload(app, FIXTURE.name, FIXTURE.read_bytes())
    [error] = app.error
    assert error.value.startswith("transport:") and "pick" in error.value
    app.selectbox(key="trace:transport").set_value("http").run()
    assert_clean(app)
    table = _table(app)
    assert "TTFT per request, mean (ms)" not in table.index
    assert table.loc["e2e per rollout, mean (s)", "measured"] > 0
