"""KV residency in the engine: the time-to-live rule, routing against its exact
expectation, conservation of prompt tokens, and the reduction to the fixed fraction."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect, expect_turns
from sim.des.draws import draw_turns
from sim.des.runners import simulate, simulate_fleet
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.records import RolloutRecords, TurnRecords
from sim.turn.transports import Transport
from sim.turn.turns import Turns

ROLLOUTS = 40
RESIDENT = ("kv_cache.residency=true", "kv_cache.ttl_s=86400.0")
TWO_TOOLS = (
    'workload.tools=[{name="quick", weight=1.0, time_s=2.0, output_tokens=500.0}, '
    '{name="slow", weight=1.0, time_s=10.0, output_tokens=500.0}]'
)
"""A tool gap of 2 s or of 10 s, with equal odds."""


@cache
def scenario(*overrides: str) -> Scenario:
    return load_scenario("codex-spark", overrides)


@cache
def run(transport: Transport, *overrides: str) -> tuple[Scenario, RolloutRecords]:
    s = scenario(*overrides)
    return s, simulate(s, transport, ROLLOUTS, keep_turns=True)


def drawn(s: Scenario) -> Turns:
    """The turns of the run's one block, in the order the per-turn rows are kept."""
    return draw_turns(s, 0, ROLLOUTS)


def whole_history(s: Scenario, turns: Turns, rows: TurnRecords) -> np.ndarray:
    """Per turn: the replica held the session's whole history."""
    f = s.inference.prefix_cache_hit_fraction
    return np.isclose(rows.cached_prompt_tokens, f * (turns.fixed_tokens + turns.prior_tokens))


def test_a_gap_beyond_the_ttl_always_reprefills_and_one_within_it_never() -> None:
    """TTL 5 s with ample memory and affinity: after a 10 s tool the history is gone (only
    the shared prefix is reused), after a 2 s tool it is all there."""
    s, records = run(Transport.WS, *RESIDENT, "kv_cache.ttl_s=5.0", TWO_TOOLS)
    turns, rows = drawn(s), records.turn_records
    f = s.inference.prefix_cache_hit_fraction
    later = turns.turn_index > 0
    gap_before = np.concatenate([[0.0], turns.tool_s[:-1]])
    slow, quick = later & (gap_before == 10.0), later & (gap_before == 2.0)
    assert slow.sum() > 100 and quick.sum() > 100
    np.testing.assert_allclose(rows.cached_prompt_tokens[slow], f * turns.fixed_tokens)
    assert whole_history(s, turns, rows)[quick].all()


def test_round_robin_reuses_the_history_left_r_turns_before() -> None:
    """One agent, four replicas, strict round-robin: turn g of the run lands on replica
    g mod 4, which last served this session at turn g - 4 (if it is of the same rollout)
    and then kept the history that turn g - 3 starts from.  Exact, turn by turn."""
    replicas = 4
    s, records = run(
        Transport.HTTP,
        *RESIDENT,
        f"capacity.inference_replicas={replicas}",
        'kv_cache.http_routing="round-robin"',
    )
    turns, rows = drawn(s), records.turn_records
    f = s.inference.prefix_cache_hit_fraction
    g = np.arange(turns.count)
    left = np.where(turns.turn_index >= replicas, turns.prior_tokens[g - replicas + 1], 0.0)
    left[turns.turn_index < replicas] = 0.0
    np.testing.assert_allclose(
        rows.cached_prompt_tokens, f * (turns.fixed_tokens + left), rtol=1e-12
    )


@pytest.mark.parametrize("replicas", [2, 4, 8])
def test_random_routing_finds_the_whole_history_one_time_in_r(replicas: int) -> None:
    """Uniform routing: turn k >= 1 lands where turn k - 1 ran with probability 1/R, and
    only there is its whole history (affinity's rate is 1): a binomial count, within four
    standard deviations."""
    overrides = (*RESIDENT, f"capacity.inference_replicas={replicas}")
    s, records = run(Transport.HTTP, *overrides, 'kv_cache.http_routing="random"')
    _, bound = run(Transport.HTTP, *overrides, 'kv_cache.http_routing="affinity"')
    turns = drawn(s)
    later = turns.turn_index > 0
    trials = int(later.sum())
    hits = int(whole_history(s, turns, records.turn_records)[later].sum())
    p = 1.0 / replicas
    assert abs(hits - trials * p) < 4 * np.sqrt(trials * p * (1 - p))
    assert whole_history(s, turns, bound.turn_records)[later].all()


@pytest.mark.slow
def test_round_robin_in_a_fleet_is_about_one_r_of_affinity() -> None:
    """Many agents interleave, so the requests routed between two of one session's are
    many and varied, and round-robin lands a session back on its replica about 1/R of the
    time, as uniform routing does exactly."""
    base = (
        *RESIDENT,
        "load.agents=40",
        "load.duration_s=300",
        "capacity.inference_replicas=4",
        "capacity.api_workers=1000",
        "capacity.safety_workers=1000",
    )
    shares = {}
    for policy in ("round-robin", "affinity"):
        s = scenario(*base, f'kv_cache.ws_routing="{policy}"', "connection.ws_drops_per_hour=0")
        rows = simulate_fleet(s, Transport.WS, 0, trace_rollouts=200).records.turn_records
        prior = prior_tokens_of(s, rows)
        f = s.inference.prefix_cache_hit_fraction
        fixed = s.workload.instructions_tokens + s.workload.tool_definitions_tokens
        later = rows.turn_index > 0
        whole = np.isclose(rows.cached_prompt_tokens, f * (fixed + prior))
        shares[policy] = whole[later].mean()
    assert shares["affinity"] == 1.0
    assert abs(shares["round-robin"] - 0.25) < 0.04


def prior_tokens_of(s: Scenario, rows: TurnRecords) -> np.ndarray:
    """The drawn prior tokens of traced fleet turns (replication 0, one block)."""
    turns = draw_turns(s, 0, int(rows.rollout.max()) + 1)
    return turns.prior_tokens[turns.offsets[rows.rollout.astype(int)] + rows.turn_index.astype(int)]


@pytest.mark.parametrize("policy", ["round-robin", "random", "consistent-hash", "least-loaded"])
def test_cached_and_uncached_prompt_tokens_add_up_to_the_prompt(policy: str) -> None:
    """Per turn, what the replica reused plus what was prefilled is the prompt; prefill
    takes the uncached tokens at the prefill rate; and the rollout's simulated time equals
    its recorded stages, so the re-prefill the engine waited out is the one recorded (the
    parallel classifiers are slow enough that some turns' verdicts wait for them)."""
    s, records = run(
        Transport.HTTP,
        *RESIDENT,
        "capacity.inference_replicas=4",
        f'kv_cache.http_routing="{policy}"',
        "safety.parallel_per_1k_tokens_ms=4.0",
    )
    turns, rows = drawn(s), records.turn_records
    np.testing.assert_allclose(
        rows.cached_prompt_tokens + rows.uncached_prompt_tokens, turns.prompt_tokens, rtol=1e-12
    )
    i = s.inference
    np.testing.assert_allclose(
        rows.stage_s[:, STAGE_COLUMN[Stage.PREFILL]],
        rows.uncached_prompt_tokens / i.prefill_tps + i.overhead_ms / 1e3,
        rtol=1e-12,
    )
    np.testing.assert_allclose(records.e2e_s, records.stage_s.sum(axis=1), rtol=1e-12)
    assert (rows.stage_s[:, STAGE_COLUMN[Stage.SAFETY]] > s.safety.blocking_fixed_ms / 1e3).any()
    assert 0.0 < records.prefix_cache_hit_rate < 0.9


@pytest.mark.parametrize("transport", list(Transport))
def test_one_agent_with_ample_memory_and_affinity_is_the_fixed_fraction_model(
    transport: Transport,
) -> None:
    """Residency on, one agent, affinity, a day's time-to-live: every number of the DES and
    of the analytic engine is the simple mode's, bit for bit."""
    affinity = ('kv_cache.http_routing="affinity"', 'kv_cache.ws_routing="affinity"')
    _, simple = run(transport)
    _, resident = run(transport, *RESIDENT, *affinity)
    for name in ("e2e_s", "stage_s", "ttft_sum_s", "cached_prompt_tokens"):
        assert np.array_equal(getattr(simple, name), getattr(resident, name)), name
    a, b = expect(scenario(), transport), expect(scenario(*RESIDENT, *affinity), transport)
    assert np.array_equal(a.stage_s, b.stage_s)
    assert a.cached_prompt_tokens == b.cached_prompt_tokens


@pytest.mark.parametrize("ttl_s", [1.0, 20.0])
def test_the_analytic_hit_rate_is_the_simulated_one(ttl_s: float) -> None:
    """The analytic engine's P(history survives) from the tool-time distribution and the
    TTL: its hit rate within 0.01 of 500 simulated rollouts' (the request's own tens of
    milliseconds in the gap are neglected)."""
    overrides = ("kv_cache.residency=true", f"kv_cache.ttl_s={ttl_s}")
    s = scenario(*overrides)
    simulated = simulate(s, Transport.WS, 500).prefix_cache_hit_rate
    analytic = expect(s, Transport.WS)
    assert abs(analytic.prefix_cache_hit_rate - simulated) < 0.01
    assert "prefix_residency" in analytic.approximations


def test_the_history_sizes_spread_as_the_drawn_histories_do() -> None:
    """The history written after turn k holds k tool results and k + 1 outputs: its variance
    against 8,192 drawn rollouts' (within 10%; one growth more, as the residency models once
    took, is 100 times too wide after the first turn and half again after the third)."""
    s = scenario(*RESIDENT)
    table = expect_turns(s, Transport.WS)
    written: dict[int, list[np.ndarray]] = {k: [] for k in (0, 1, 2, 10)}
    for block in range(8):
        turns = draw_turns(s, block, BLOCK_ROLLOUTS)
        after = turns.history_after()
        for k, sizes in written.items():
            sizes.append(after[turns.turn_index == k])
    for k, sizes in written.items():
        drawn_variance = float(np.concatenate(sizes).var())
        assert drawn_variance == pytest.approx(table.history_variances()[k], rel=0.1)
