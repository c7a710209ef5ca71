"""Compaction and tool-output truncation: the drawn histories' invariants, the grid's law
against the drawn recursion, the records and traces, and the analytic engine against the DES."""

from __future__ import annotations

import numpy as np
import pytest
from support import scenario

from models.distributions import Constant, LogNormal
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.capped import capped
from sim.analytic.agent.context_grid import context_law
from sim.analytic.agent.engine import expect, expect_many
from sim.analytic.agent.expectations import Approximation
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.report.chrome_trace import trace_events
from sim.turn.transports import Transport

COMPACTING = ("compaction.threshold_tokens=30000", "compaction.summary_tokens=3000")
COMPACT = STAGE_COLUMN[Stage.COMPACT]


def _compacting(*more: str):
    return scenario("codex-spark", *COMPACTING, *more)


def test_no_prompt_exceeds_the_threshold_by_more_than_one_turns_growth() -> None:
    s = _compacting("workload.tool_calls_per_rollout=120")
    turns = draw_turns(s, 0, 64)
    threshold = s.compaction.threshold_tokens
    prompt = turns.fixed_tokens + turns.context_tokens
    assert np.all(prompt < threshold)
    due = turns.compacted > 0
    request = turns.fixed_tokens + turns.compaction_prior_tokens + turns.compaction_new_tokens
    assert due.sum() > 64
    assert np.all(request[due] >= threshold)
    rows = np.flatnonzero(due)
    grown = turns.output_tokens[rows - 1] + turns.compaction_new_tokens[rows]
    assert np.all(request[due] < threshold + grown)


def test_a_compacted_turn_sends_the_task_the_summary_and_the_last_turn() -> None:
    s = _compacting("workload.tool_calls_per_rollout=120")
    turns = draw_turns(s, 0, 8)
    rows = np.flatnonzero(turns.compacted)
    kept = s.workload.first_message_tokens + s.compaction.summary_tokens
    expected = kept + turns.output_tokens[rows - 1] + turns.compaction_new_tokens[rows]
    np.testing.assert_allclose(turns.new_tokens[rows], expected, rtol=1e-12)
    assert np.all(turns.prior_tokens[rows] == 0)
    assert np.all(turns.items_new[rows] == turns.context_items[rows])
    assert np.all(turns.context_items[rows] == 2 + s.workload.output_items_per_turn + 1)


def test_without_compaction_the_draws_are_unchanged() -> None:
    plain = draw_turns(scenario("codex-spark"), 0, 16)
    assert not plain.compacted.any()
    off = draw_turns(scenario("codex-spark", "compaction.summary_tokens=99"), 0, 16)
    np.testing.assert_array_equal(plain.prior_tokens, off.prior_tokens)


def test_every_tool_output_is_cut_to_the_cap() -> None:
    s = scenario("codex-spark", "compaction.tool_output_cap_tokens=600")
    turns = draw_turns(s, 0, 32)
    later = turns.turn_index > 0
    assert turns.new_tokens[later].max() == 600
    cut = capped(LogNormal(median=1100.0, sigma=0.8), 600.0)
    exact = LogNormal(median=1100.0, sigma=0.8)
    assert cut.mean == pytest.approx(exact.mean - float(exact.partial_expectation(600.0)), 1e-6)


def test_the_grids_law_follows_the_recursion_when_growth_is_constant() -> None:
    """Constant output 150 and tool output 850: the drawn recursion's compactions, exactly."""
    s = scenario(
        "codex-spark",
        *COMPACTING,
        "workload.tool_calls_per_rollout=90",
        "workload.output_tokens=150",
        "workload.tools=[{name='t', weight=1.0, time_s=0.1, output_tokens=850}]",
    )
    turns = draw_turns(s, 0, 1)
    w = s.workload
    law = context_law(
        Constant(value=150.0),
        Constant(value=850.0),
        turns.count,
        w.instructions_tokens + w.tool_definitions_tokens,
        w.first_message_tokens,
        s.compaction.summary_tokens,
        s.compaction.threshold_tokens,
        w.output_items_per_turn + 1.0,
    )
    np.testing.assert_allclose(law.compacted, turns.compacted, atol=1e-9)
    kept = turns.compacted == 0
    np.testing.assert_allclose(law.prior_tokens[kept], turns.prior_tokens[kept], rtol=1e-9)
    np.testing.assert_allclose(law.context_items[kept], turns.context_items[kept], rtol=1e-9)
    due = turns.compacted > 0
    np.testing.assert_allclose(law.compacted_tokens[due], turns.new_tokens[due], rtol=1e-9)
    request = law.request_prior_tokens[due]
    np.testing.assert_allclose(request, turns.compaction_prior_tokens[due], rtol=1e-9)


def test_the_compaction_turn_is_in_the_records_and_the_trace() -> None:
    records = simulate(_compacting(), Transport.WS, 8, keep_turns=True)
    rows = records.turn_records
    assert rows is not None
    compacted = rows.stage_s[:, COMPACT] > 0
    assert compacted.any()
    assert np.all(rows.turn_index[compacted] > 0)
    np.testing.assert_allclose(records.stage_s.sum(axis=1), records.e2e_s, rtol=1e-9)
    spans = [e for e in trace_events(rows, "ws") if e.get("ph") == "X" and e["name"] == "compact"]
    assert len(spans) == int(compacted.sum())


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_the_analytic_engine_agrees_with_the_des_with_compaction_on(transport: Transport) -> None:
    """Within four standard errors, on e2e and on the compaction stage (4,096 rollouts)."""
    s = _compacting("compaction.tool_output_cap_tokens=2500")
    records = simulate(s, transport, 4096)
    expected = expect(s, transport)
    assert Approximation.COMPACTION in expected.approximations
    for drawn, mean in (
        (records.e2e_s, expected.e2e_s),
        (records.stage_s[:, COMPACT], expected.stage_s[COMPACT]),
    ):
        assert abs(drawn.mean() - mean) < 4 * drawn.std() / np.sqrt(drawn.size)


def test_points_with_and_without_compaction_evaluate_as_alone() -> None:
    both = [scenario("codex-spark"), _compacting(), scenario("gpt5-flagship")]
    together = expect_many(both, Transport.WS)
    for alone, result in zip(both, together, strict=True):
        single = expect(alone, Transport.WS)
        np.testing.assert_array_equal(single.stage_s, result.stage_s)
        assert single.approximations == result.approximations
    assert Approximation.COMPACTION not in together[0].approximations


def test_a_threshold_below_what_compaction_keeps_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"compaction\.threshold_tokens"):
        scenario("codex-spark", "compaction.threshold_tokens=12000")


def test_a_threshold_one_turn_above_what_compaction_keeps_is_refused_with_the_numbers() -> None:
    """Instructions, tools, task and summary make 14,400 tokens; a turn adds 140.5 output and
    822.3 tool output on average, so a threshold at or below 15,362.8 compacts every turn."""
    s = scenario("codex-spark")
    growth = s.workload.output_tokens.mean + s.workload.mean_tool_output_tokens()
    assert s.workload.mean_history_growth_tokens(0.0) == pytest.approx(growth, rel=1e-12)
    with pytest.raises(ValueError, match=r"\(963\) = 15,363; at or below it every turn compacts"):
        scenario("codex-spark", "compaction.threshold_tokens=15362")
    assert scenario("codex-spark", "compaction.threshold_tokens=15363").compaction.compacts


def test_the_growth_counts_the_cap_and_parallel_calls() -> None:
    """Each call's output is cut to the cap before it enters the history: E[min(U, cap)],
    times the calls per turn."""
    s = scenario("codex-spark", "workload.parallel_calls_per_turn=3")
    capped_mean = sum(
        p * float(capped(tool.output_tokens, 1000.0).mean)
        for p, tool in zip(s.workload.tool_probabilities(), s.workload.tools, strict=True)
    )
    expected = s.workload.output_tokens.mean + 3 * capped_mean
    assert s.workload.mean_history_growth_tokens(1000.0) == pytest.approx(expected, rel=1e-3)
