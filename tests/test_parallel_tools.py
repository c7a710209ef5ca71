"""Parallel tool calls: the expected maximum against closed forms, the DES against the
analytic engine, and the items each call adds to the history."""

from __future__ import annotations

import numpy as np
import pytest
from support import scenario

from models.distributions import Empirical, Exponential
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect
from sim.analytic.agent.expectations import Approximation
from sim.analytic.agent.parallel_tools import expected_maximum, turn_tool_time
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.turn.transports import Transport
from sim.turn.turns import history

CALLS = (
    "workload.parallel_calls_per_turn={kind='empirical', values=[1, 2, 3, 4], weights=[1, 1, 1, 1]}"
)
OVERHEAD = "client.parallel_call_overhead_ms=2.0"


def harmonic(m: int) -> float:
    return sum(1.0 / k for k in range(1, m + 1))


@pytest.mark.parametrize("calls", [1, 2, 3, 5, 10])
def test_the_slowest_of_m_exponential_tools_takes_the_harmonic_number_of_means(calls: int) -> None:
    """E[max of m Exp(mean mu)] = mu H_m."""
    found = expected_maximum(Exponential(mean=2.0), calls)
    assert found == pytest.approx(2.0 * harmonic(calls), rel=1e-5)


def test_the_turn_tool_time_mixes_the_maxima_and_adds_the_overhead_of_each_extra_call() -> None:
    tool = Exponential(mean=0.3)
    calls = Empirical(values=(1, 2, 4), weights=(1, 2, 1))
    found = turn_tool_time(tool, calls, 0.01)
    expected = sum(
        p * (0.3 * harmonic(m) + (m - 1) * 0.01) for m, p in ((1, 0.25), (2, 0.5), (4, 0.25))
    )
    assert found.mean == pytest.approx(expected, rel=1e-5)
    assert found.survival(0.0) == pytest.approx(1.0)
    # P(T <= x) = sum_m P(m) F(x - (m - 1) c)^m
    x = 0.5
    cdf = sum(
        p * (1 - np.exp(-(x - (m - 1) * 0.01) / 0.3)) ** m
        for m, p in ((1, 0.25), (2, 0.5), (4, 0.25))
    )
    assert 1 - found.survival(x) == pytest.approx(cdf, abs=0.01)


def test_one_call_per_turn_is_the_tool_mix_itself() -> None:
    tool = Exponential(mean=0.3)
    assert turn_tool_time(tool, Empirical(values=(1,), weights=(1,)), 0.5) is tool


def test_each_call_adds_a_call_item_and_an_output_item() -> None:
    """Turn k + 1 sends the m_k outputs of turn k; the history grows by 2 m_k + items - 1."""
    calls = np.array([3])
    grown = history(
        calls, np.full(4, 100.0), np.full(4, 50.0), 400.0, 2, np.array([2.0, 1.0, 3.0, 0.0])
    )
    assert grown["items_new"].tolist() == [1, 2, 1, 3]
    assert grown["context_items"].tolist() == [1, 1 + 5, 1 + 5 + 3, 1 + 5 + 3 + 7]


def test_drawn_turns_run_their_slowest_call_plus_overhead() -> None:
    s = scenario("codex-spark", CALLS, OVERHEAD)
    single = draw_turns(scenario("codex-spark"), 0, 64)
    turns = draw_turns(s, 0, 64)
    tooled = turns.is_last == 0
    # The first call keeps its draws: a turn with more calls is never faster.
    assert np.all(turns.tool_s[tooled] >= single.tool_s[tooled])
    assert np.all(turns.new_tokens >= single.new_tokens - 1e-9)
    assert np.all(turns.tool_s[~tooled] == 0)


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_des_agrees_with_the_analytic_engine(transport: Transport) -> None:
    s = scenario("codex-spark", CALLS, OVERHEAD)
    expected = expect(s, transport)
    assert Approximation.PARALLEL_TOOLS in expected.approximations
    records = simulate(s, transport, 2048)
    for column, mean in (
        (records.e2e_s, expected.e2e_s),
        (records.stage_s[:, STAGE_COLUMN[Stage.TOOL]], expected.stage_s[STAGE_COLUMN[Stage.TOOL]]),
    ):
        half_width = 3.0 * column.std() / np.sqrt(column.size)
        assert abs(column.mean() - mean) < half_width
