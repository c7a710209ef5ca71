"""The discrete-event engine: the budget adds up (per-turn records summed by rollout and
stage equal the per-rollout records, the reported budget and the SimPy clock), durations
are never negative, and transports run with one seed see the same workload (common random
numbers)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import CORE_PRESETS, scenario

from models.scenario import Scenario
from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analysis.run import Engine, execute, parse_spec
from sim.analysis.summary import summarize
from sim.des.runners import simulate
from sim.turn.records import RolloutRecords, TurnRecords
from sim.turn.transports import Transport

STRESS = (
    "connection.ws_drops_per_hour=600",
    "connection.store=false",
    "client.keepalive_idle_s=0.05",
)
"""Frequent cache loss (a drop every 6 s, continuations fail) and short keep-alive."""


@cache
def run(source: str, transport: Transport, rollouts: int, *overrides: str) -> RolloutRecords:
    return simulate(scenario(source, *overrides), transport, rollouts, keep_turns=True)


def turns_of(records: RolloutRecords) -> TurnRecords:
    assert records.turn_records is not None
    return records.turn_records


def stage_matrix(turns: TurnRecords, rollouts: int) -> np.ndarray:
    """Seconds per (rollout, stage), summed here from the per-turn rows."""
    matrix = np.zeros((rollouts, len(STAGES)))
    np.add.at(matrix, turns.rollout.astype(int), turns.stage_s)
    return matrix


def assert_budget_adds_up(records: RolloutRecords) -> None:
    """The per-rollout records equal the per-turn records summed by rollout, and both add
    up to the SimPy clock: a turn lasts until the next one starts, a rollout from its
    first turn's start to its last turn's end."""
    turns = turns_of(records)
    rollout = turns.rollout.astype(int)
    matrix = stage_matrix(turns, records.count)
    np.testing.assert_allclose(records.stage_s, matrix, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(matrix.sum(axis=1), records.e2e_s, rtol=1e-9, atol=0)
    np.testing.assert_array_equal(records.turns, np.bincount(rollout, minlength=records.count))
    for name, column in (
        ("cold_turns", turns.cold),
        ("ttft_sum_s", turns.ttft_s),
        ("api_cpu_s", turns.api_cpu_s),
    ):
        summed = np.bincount(rollout, weights=column, minlength=records.count)
        np.testing.assert_allclose(getattr(records, name), summed, rtol=1e-9, err_msg=name)
    turn_s = turns.stage_s.sum(axis=1)
    same_rollout = np.diff(rollout) == 0
    gaps = np.diff(turns.start_at_s)[same_rollout]
    np.testing.assert_allclose(gaps, turn_s[:-1][same_rollout], rtol=1e-9, atol=1e-9)
    first = np.flatnonzero(turns.turn_index == 0)
    last = np.append(first[1:], rollout.size) - 1
    clock_e2e = turns.start_at_s[last] + turn_s[last] - turns.start_at_s[first]
    np.testing.assert_allclose(clock_e2e, records.e2e_s, rtol=1e-9, atol=1e-9)


def assert_no_negative_durations(records: RolloutRecords) -> None:
    turns = turns_of(records)
    assert np.all(turns.stage_s >= 0)
    assert np.all(turns.post_overlapped_s >= 0)
    assert np.all(turns.ttft_s > 0)
    request_s = turns.stage_s[:, : STAGE_COLUMN[Stage.TOOL]].sum(axis=1)
    assert np.all(turns.ttft_s <= request_s), "the first token arrives within its request"
    assert np.all(records.e2e_s > 0)


@pytest.mark.parametrize("transport", list(Transport))
@pytest.mark.parametrize("overrides", [(), STRESS], ids=["preset", "stress"])
def test_stages_add_up_to_the_simulated_end_to_end(
    transport: Transport, overrides: tuple[str, ...]
) -> None:
    records = run("codex-spark", transport, 200, *overrides)
    assert records.count == 200
    assert_budget_adds_up(records)
    assert_no_negative_durations(records)


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_the_reported_budget_is_the_mean_of_the_turns_summed_by_rollout(
    transport: Transport,
) -> None:
    """``budget_s`` of ``run --json``: per stage, the mean over rollouts of the per-turn
    seconds summed by rollout; the stages add up to the mean end-to-end time."""
    spec = parse_spec(f"codex-spark:{transport.value}")
    run = execute(spec, scenario("codex-spark"), Engine.DES, 200, keep_turns=True)
    result = summarize(run).to_json()
    assert run.records is not None
    matrix = stage_matrix(turns_of(run.records), 200)
    budget = [result["budget_s"][stage.value] for stage in STAGES]
    np.testing.assert_allclose(budget, matrix.mean(axis=0), rtol=1e-9, atol=1e-12)
    assert sum(budget) == pytest.approx(result["e2e_s"]["mean"], rel=1e-9)
    assert result["e2e_s"]["mean"] == pytest.approx(matrix.sum(axis=1).mean(), rel=1e-9)


def test_the_stress_scenario_exercises_cache_loss() -> None:
    ws = run("codex-spark", Transport.WS, 200, *STRESS)
    assert ws.cold_turns.mean() > 2, "several reconnects per rollout"
    assert ws.stage_s[:, STAGE_COLUMN[Stage.RECOVER]].sum() > 0


def test_keep_alive_expires_exactly_after_a_tool_step_longer_than_the_idle_time() -> None:
    records = run("codex-spark", Transport.HTTP, 200, *STRESS)
    turns = turns_of(records)
    idle_s = scenario("codex-spark", *STRESS).client.keepalive_idle_s
    tool_s = turns.stage_s[:, STAGE_COLUMN[Stage.TOOL]]
    later = turns.turn_index > 0
    expired = np.concatenate([[True], tool_s[:-1] > idle_s])
    np.testing.assert_array_equal(turns.cold[later], expired[later])
    assert np.all(turns.cold[~later] == 1)
    assert 0.2 < turns.cold[later].mean() < 0.8, "both branches are exercised"


@pytest.mark.parametrize("preset", CORE_PRESETS)
def test_common_random_numbers_across_transports(preset: str) -> None:
    """With one seed every transport sees the same turns, tools, output and decode rates."""
    shared = (Stage.TOOL, Stage.DECODE, Stage.PREFILL)
    runs = {t: run(preset, t, 300) for t in Transport}
    http = runs[Transport.HTTP]
    for transport, records in runs.items():
        np.testing.assert_array_equal(records.turns, http.turns, err_msg=transport)
        for stage in shared:
            column = STAGE_COLUMN[stage]
            np.testing.assert_array_equal(
                records.stage_s[:, column], http.stage_s[:, column], err_msg=f"{transport} {stage}"
            )
            np.testing.assert_array_equal(
                turns_of(records).stage_s[:, column], turns_of(http).stage_s[:, column]
            )


def test_common_random_numbers_across_presets_with_one_workload() -> None:
    """responses-2025 differs from codex-spark only in the API: same draws, same seed."""
    before, after = (
        run("responses-2025", Transport.HTTP, 300),
        run("codex-spark", Transport.HTTP, 300),
    )
    np.testing.assert_array_equal(before.turns, after.turns)
    for stage in (Stage.TOOL, Stage.DECODE, Stage.PREFILL):
        column = STAGE_COLUMN[stage]
        np.testing.assert_array_equal(before.stage_s[:, column], after.stage_s[:, column])


def test_another_seed_draws_another_workload() -> None:
    one = run("codex-spark", Transport.HTTP, 300)
    other = run("codex-spark", Transport.HTTP, 300, "seed=1")
    assert not np.array_equal(one.turns, other.turns)
    assert not np.array_equal(one.e2e_s, other.e2e_s)


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_a_rollout_does_not_depend_on_how_many_follow(transport: Transport) -> None:
    short, long = run("codex-spark", transport, 40), run("codex-spark", transport, 90)
    np.testing.assert_array_equal(long.stage_s[:40], short.stage_s)
    np.testing.assert_array_equal(long.e2e_s[:40], short.e2e_s)


def test_rollouts_beyond_one_block_are_simulated() -> None:
    records = simulate(scenario("codex-spark"), Transport.WS, 1100)
    assert records.count == 1100
    assert records.turn_records is None
    np.testing.assert_allclose(records.stage_s.sum(axis=1), records.e2e_s, rtol=1e-9)
    assert len(np.unique(records.e2e_s)) == 1100


def test_stage_columns_follow_the_stage_enum() -> None:
    assert list(STAGE_COLUMN) == list(STAGES)
    assert [STAGE_COLUMN[stage] for stage in STAGES] == list(range(len(STAGES)))


OVERRIDES = st.fixed_dictionaries(
    {
        "network.rtt_ms": st.floats(0, 300),
        "network.uplink_bytes_per_s": st.floats(1e4, 1e9),
        "inference.prefill_tps": st.floats(500, 2e5),
        "inference.decode_tps": st.floats(10, 5000),
        "inference.prefix_cache_hit_fraction": st.floats(0, 1),
        "api.render_cache_hit_prob": st.floats(0, 1),
        "connection.store": st.booleans(),
        "connection.ws_drops_per_hour": st.floats(0, 1800),
        "connection.ws_lifetime_s": st.floats(1, 3600),
        "client.keepalive_idle_s": st.floats(0.01, 30),
        "workload.tool_calls_per_rollout": st.integers(0, 40),
        "workload.tools[3].weight": st.floats(0.01, 5),
    }
)


def as_assignments(values: dict[str, object]) -> tuple[str, ...]:
    """``--set`` style PATH=VALUE strings (TOML values)."""
    return tuple(
        f"{path}={str(value).lower() if isinstance(value, bool) else repr(value)}"
        for path, value in values.items()
    )


@settings(max_examples=25, derandomize=True, deadline=None)
@given(values=OVERRIDES)
def test_no_negative_durations_over_valid_scenarios(values: dict[str, object]) -> None:
    base: Scenario = scenario("codex-spark", *as_assignments(values))
    assert base.network.rtt_ms == values["network.rtt_ms"]
    for transport in Transport:
        records = simulate(base, transport, 20, keep_turns=True)
        assert_no_negative_durations(records)
        assert_budget_adds_up(records)
        expected_turns = values["workload.tool_calls_per_rollout"] + 1
        assert np.all(records.turns == expected_turns)
