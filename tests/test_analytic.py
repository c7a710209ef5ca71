"""The analytic engine: it agrees with the DES, and it states the teaching result that
HTTP render and safety work grows with the square of the turn count, WebSocket's linearly.

DES against analytic: 4,000 rollouts per case.  Every stage's DES mean must lie
within ``Z_TOLERANCE`` standard errors (of that stage's per-rollout mean) of the
analytic value, plus ``SLACK_S`` for stages that are zero or constant.  The
analytic engine computes the WebSocket cache loss over the distribution of
decode and tool times (the rest of each request at its expected value) and
the parallel-safety excess by quadrature; where either applies the result
names it in ``approximations``, and at these settings both are far below one
standard error (``tests/test_connection_loss.py`` and ``tests/test_excess.py``
test them closely).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from support import CORE_PRESETS, scenario

from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analytic.agent.engine import Expectation, expect
from sim.analytic.agent.expectations import Approximation
from sim.des.runners import simulate
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

ROLLOUTS = 4000
Z_TOLERANCE = 4.0
SLACK_S = 1e-9
DROPS = ("connection.ws_drops_per_hour=120",)
"""A drop every 30 s on average: about one lost cache per WebSocket rollout."""


@cache
def both(preset: str, transport: Transport, *overrides: str) -> tuple[RolloutRecords, Expectation]:
    s = scenario(preset, *overrides)
    return simulate(s, transport, ROLLOUTS), expect(s, transport)


def standard_error(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) / np.sqrt(values.size)


CASES = [pytest.param(p, t, (), id=f"{p}:{t}") for p in CORE_PRESETS for t in Transport] + [
    pytest.param("codex-spark", t, (*DROPS, store), id=f"codex-spark:{t}+drops,{store}")
    for t in (Transport.WS, Transport.WS_APPEND)
    for store in ("connection.store=true", "connection.store=false")
]


@pytest.mark.parametrize(("preset", "transport", "overrides"), CASES)
def test_des_stage_means_agree_with_the_analytic_engine(
    preset: str, transport: Transport, overrides: tuple[str, ...]
) -> None:
    records, expected = both(preset, transport, *overrides)
    for stage in STAGES:
        column = records.stage_s[:, STAGE_COLUMN[stage]]
        gap = abs(column.mean() - expected.stage_s[STAGE_COLUMN[stage]])
        assert gap <= Z_TOLERANCE * standard_error(column) + SLACK_S, stage
    gap = abs(records.e2e_s.mean() - expected.e2e_s)
    assert gap <= Z_TOLERANCE * standard_error(records.e2e_s)
    api_gap = abs(records.api_cpu_s.mean() - expected.api_cpu_s)
    assert api_gap <= Z_TOLERANCE * standard_error(records.api_cpu_s)
    assert abs(records.turns.mean() - expected.turns) <= Z_TOLERANCE * standard_error(records.turns)
    cold_gap = abs(records.cold_turns.mean() - expected.cold_turns)
    assert cold_gap <= Z_TOLERANCE * standard_error(records.cold_turns) + SLACK_S
    des_ttft_s = records.ttft_sum_s.sum() / records.turns.sum()
    assert des_ttft_s == pytest.approx(expected.ttft_mean_s, rel=0.01)


def test_drops_are_exercised() -> None:
    records, expected = both("codex-spark", Transport.WS, *DROPS, "connection.store=false")
    assert expected.cold_turns > 1.2
    assert expected.stage_s[STAGE_COLUMN[Stage.RECOVER]] > 0
    assert records.stage_s[:, STAGE_COLUMN[Stage.RECOVER]].mean() > 0


@pytest.mark.parametrize("preset", CORE_PRESETS)
def test_http_is_exact_and_websocket_names_its_approximation(preset: str) -> None:
    for transport in Transport:
        approximations = expect(scenario(preset), transport).approximations
        if transport.is_websocket:
            assert approximations == (Approximation.CONNECTION_LOSS,), "0.5 drops per hour"
        else:
            assert approximations == ()
    calm = scenario(preset, *QUADRATIC)
    assert all(expect(calm, t).approximations == () for t in Transport)


@pytest.mark.parametrize("preset", CORE_PRESETS)
def test_expected_turns_follow_the_tool_call_distribution(preset: str) -> None:
    s = scenario(preset)
    for transport in Transport:
        e = expect(s, transport)
        assert e.turns == pytest.approx(s.workload.tool_calls_per_rollout.mean + 1, rel=1e-12)
        assert e.e2e_s == pytest.approx(float(e.stage_s.sum()), rel=1e-12)
        assert np.all(e.stage_s >= 0)


CALLS = (10, 20, 30, 40, 80)
QUADRATIC = ("connection.ws_drops_per_hour=0",)
"""Without drops a WebSocket rollout loses its cache never (60-minute lifetime)."""


def api_work_s(transport: Transport, calls: int) -> float:
    """Render plus safety-classifier work of one rollout with a fixed number of tool calls."""
    s = scenario("codex-spark", f"workload.tool_calls_per_rollout={calls}", *QUADRATIC)
    e = expect(s, transport)
    return float(e.stage_s[STAGE_COLUMN[Stage.RENDER]] + e.safety_cpu_s)


def closed_form_s(transport: Transport, calls: int) -> float:
    """The same work derived by hand from the preset's parameters.

    Turn k (0..n) of a rollout with n tool calls has a context of
    C_k = m + k (a + b) tokens (m: the user's task, a: output, b: tool output
    per turn) on top of F fixed tokens, and new input m (k = 0) or b (k > 0).
    HTTP renders F + C_k (or only the new input on a render-cache hit, prob. h)
    and classifies F + C_k every turn: the sums over k are quadratic in n.
    WebSocket renders and classifies F + C_0 once, then b per turn: linear in n.
    """
    s = scenario("codex-spark")
    w, api, safety = s.workload, s.api, s.safety
    weights = np.array([tool.weight for tool in w.tools])
    b = float(weights @ [tool.output_tokens.mean for tool in w.tools] / weights.sum())
    a, m = w.output_tokens.mean, w.first_message_tokens
    fixed = w.instructions_tokens + w.tool_definitions_tokens
    n = calls
    turns = n + 1
    render_ms_per_token = api.render_per_1k_tokens_ms / 1000
    classify_ms_per_token = (
        safety.blocking_per_1k_tokens_ms + safety.parallel_per_1k_tokens_ms
    ) / 1000
    classify_fixed_ms = turns * (safety.blocking_fixed_ms + safety.parallel_fixed_ms)
    if transport is Transport.HTTP:
        history_tokens = turns * (fixed + m) + (a + b) * n * (n + 1) / 2
        h = api.render_cache_hit_prob
        rendered = h * (m + n * b) + (1 - h) * history_tokens
        classified = history_tokens
    else:
        rendered = classified = fixed + m + n * b
    work_ms = (
        render_ms_per_token * rendered + classify_fixed_ms + classify_ms_per_token * classified
    )
    return work_ms / 1000


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
@pytest.mark.parametrize("calls", CALLS)
def test_api_work_matches_the_closed_form(transport: Transport, calls: int) -> None:
    assert api_work_s(transport, calls) == pytest.approx(closed_form_s(transport, calls), rel=1e-9)


def test_http_api_work_grows_with_the_square_of_the_turns() -> None:
    work = np.array([api_work_s(Transport.HTTP, n) for n in CALLS])
    second_differences = np.diff(work[:4], 2)
    s = scenario("codex-spark")
    # The quadratic coefficient of the closed form, times 2 h^2 (h = 10 calls).
    w = s.workload
    weights = np.array([tool.weight for tool in w.tools])
    per_turn_tokens = w.output_tokens.mean + float(
        weights @ [tool.output_tokens.mean for tool in w.tools] / weights.sum()
    )
    ms_per_token = (
        (1 - s.api.render_cache_hit_prob) * s.api.render_per_1k_tokens_ms
        + s.safety.blocking_per_1k_tokens_ms
        + s.safety.parallel_per_1k_tokens_ms
    ) / 1e6
    quadratic_s = ms_per_token * per_turn_tokens / 2
    np.testing.assert_allclose(second_differences, 2 * quadratic_s * 10**2, rtol=1e-9)
    assert quadratic_s > 0
    # A quadratic through n = 10, 20, 30 predicts n = 80 exactly.
    coefficients = np.polyfit(CALLS[:3], work[:3], 2)
    assert np.polyval(coefficients, 80) == pytest.approx(work[4], rel=1e-9)
    assert coefficients[0] == pytest.approx(quadratic_s, rel=1e-6)
    # Doubling the turns: the added work grows toward 4x (quadratic), not 2x (linear).
    assert (work[4] - work[3]) / (work[3] - work[1]) > 3.0


def test_websocket_api_work_grows_linearly_with_the_turns() -> None:
    work = np.array([api_work_s(Transport.WS, n) for n in CALLS])
    second_differences = np.diff(work[:4], 2)
    np.testing.assert_allclose(second_differences, 0.0, atol=1e-12)
    slope = (work[4] - work[3]) / 40
    np.testing.assert_allclose(np.diff(work[:4]) / 10, slope, rtol=1e-9)
    assert (work[4] - work[3]) / (work[3] - work[1]) == pytest.approx(2.0, rel=1e-9)
    http = np.array([api_work_s(Transport.HTTP, n) for n in CALLS])
    assert np.all(http > work)
    assert http[4] / work[4] > http[0] / work[0], "the gap widens with the turns"
