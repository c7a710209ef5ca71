"""The answers in docs/exercises.md are recomputed from the model.

Each test computes a quantity with the analytic engine, formats it as the page
quotes it, and checks that the page says exactly that: a change to the model
that moves an answer fails here until the page is updated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from models.loading import load_scenario
from models.stages import STAGES, Stage
from sim.engine.analytic import Expectation, expect
from sim.engine.transports import Transport

PAGE = (Path(__file__).resolve().parent.parent / "docs" / "exercises.md").read_text()
PAGE_TEXT = " ".join(PAGE.split())


def expected(source: str, transport: Transport, *overrides: str) -> Expectation:
    return expect(load_scenario(source, list(overrides)), transport)


def stage_s(expectation: Expectation, *stages: Stage) -> float:
    return float(sum(expectation.stage_s[STAGES.index(stage)] for stage in stages))


def e2e_reduction(*overrides: str) -> float:
    http = expected("codex-spark", Transport.HTTP, *overrides)
    ws = expected("codex-spark", Transport.WS, *overrides)
    return 1.0 - ws.e2e_s / http.e2e_s


def assert_quoted(text: str) -> None:
    assert text in PAGE_TEXT, f"docs/exercises.md should quote {text!r}"


@pytest.mark.parametrize("decode_tps", [250, 300, 65, 4000])
def test_amdahl_answers(decode_tps: int) -> None:
    """Exercise 1: the reduction at each quoted decode speed."""
    reduction = e2e_reduction(f"inference.decode_tps={decode_tps}")
    assert_quoted(f"{reduction:.1%} at {decode_tps:,} tokens/s")


def test_quadratic_against_linear_answers() -> None:
    """Exercise 2: render plus safety per rollout at 20 and 40 tool calls, and the factor."""
    for transport in (Transport.HTTP, Transport.WS):
        at_20, at_40 = (
            stage_s(
                expected("codex-spark", transport, f"workload.tool_calls_per_rollout={n}"),
                Stage.RENDER,
                Stage.SAFETY,
            )
            for n in (20, 40)
        )
        assert_quoted(f"from {at_20:.2f} s to {at_40:.2f} s")
        assert_quoted(f"a factor of {at_40 / at_20:.2f}")


def test_first_sprint_answers() -> None:
    """Exercise 3: TTFT before and after the sprint, and the saving of each change per turn."""
    before = expected("responses-2025", Transport.HTTP)
    after = expected("codex-spark", Transport.HTTP)
    assert_quoted(f"from {before.ttft_mean_s * 1e3:.0f} ms to {after.ttft_mean_s * 1e3:.0f} ms")
    assert_quoted(f"a {1 - after.ttft_mean_s / before.ttft_mean_s:.1%} reduction")
    for stage in (Stage.HOPS, Stage.SAFETY, Stage.ROUTE, Stage.RENDER):
        saved_ms = (stage_s(before, stage) - stage_s(after, stage)) / before.turns * 1e3
        assert_quoted(f"{saved_ms:.1f} ms")


def test_cache_loss_answers() -> None:
    """Exercise 4: store=true against store=false at 120 drops per hour."""
    drops = "connection.ws_drops_per_hour=120"
    stored = expected("codex-spark", Transport.WS, drops, "connection.store=true")
    resent = expected("codex-spark", Transport.WS, drops, "connection.store=false")
    assert_quoted(f"{stored.e2e_s:.3f} s against {resent.e2e_s:.3f} s")
    assert_quoted(f"opens {resent.cold_turns:.2f} connections")
    assert_quoted(f"{stage_s(resent, Stage.RECOVER):.3f} s per rollout in all")


@pytest.mark.parametrize("rtt_ms", [5, 30, 150])
def test_distance_answers(rtt_ms: int) -> None:
    """Exercise 5: the reduction at each quoted round-trip time."""
    assert_quoted(f"{e2e_reduction(f'network.rtt_ms={rtt_ms}'):.1%} at {rtt_ms} ms")
