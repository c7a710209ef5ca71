"""The real engine's model side, without the engine: state-bound prefix reuse and the context
terms in both engines, the KV store's budget, the profile's fits and its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import scenario

from models.errors import ScenarioError
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.testbed.engine.kv import KvStore, Snapshot
from sim.testbed.profiling.fit import linear_fit
from sim.testbed.profiling.profile_file import read_profile
from sim.turn.transports import Transport, turn_work

ROOT = Path(__file__).resolve().parents[1]
REAL = str(ROOT / "docs" / "testbed-real.toml")
PROFILED = (
    "inference.prefix_cache_hit_fraction=1.0",
    "inference.prefix_reuse_needs_state=true",
    "inference.prefill_tps=300.0",
    "inference.decode_tps={kind='constant',value=60.0}",
    "inference.prefill_ms_per_token_per_1k_context_tokens=0.3",
    "inference.decode_ms_per_token_per_1k_context_tokens=2.0",
)


def test_a_request_without_state_prefills_its_whole_prompt_where_reuse_needs_state() -> None:
    """http-full resends the history without state: every turn prefills it all; http (stored)
    and ws (cached, or stored after a lost connection) prefill only the new input after
    turn 0, which starts a chain."""
    s = scenario(REAL, *PROFILED, "connection.store=true")
    turns = draw_turns(s, 0, 4)
    whole = turns.fixed_tokens + turns.context_tokens
    after_first = np.where(turns.turn_index == 0, whole, turns.new_tokens)
    expected = {Transport.HTTP_FULL: whole, Transport.HTTP: after_first, Transport.WS: after_first}
    for transport, uncached in expected.items():
        for work in turn_work(s, transport, turns):
            np.testing.assert_allclose(work.prompt_tokens_uncached, uncached)


def test_without_the_switch_every_request_reuses_its_resident_prefix() -> None:
    s = scenario(REAL, *PROFILED[:1])
    turns = draw_turns(s, 0, 4)
    for transport in (Transport.HTTP_FULL, Transport.WS):
        _, warm = turn_work(s, transport, turns)
        np.testing.assert_allclose(warm.prompt_tokens_uncached, turns.new_tokens)


def test_the_des_prices_the_context_terms_as_their_formula() -> None:
    """Decode of each turn: n / rate + 2 ms x n x (prompt + n / 2) / 1000."""
    s = scenario(REAL, *PROFILED)
    records = simulate(s, Transport.WS, 3, keep_turns=True)
    turns = draw_turns(s, 0, 3)
    n, prompt = turns.output_tokens, turns.fixed_tokens + turns.context_tokens
    decode_s = n / 60.0 + 2.0e-3 * n * (prompt + n / 2) / 1000
    column = records.turn_records.stage_s[:, STAGE_COLUMN[Stage.DECODE]]
    np.testing.assert_allclose(column, decode_s, rtol=1e-12)


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.HTTP_FULL, Transport.WS])
def test_the_analytic_engine_follows_the_des_with_the_profiled_terms(transport: Transport) -> None:
    """At expected counts (the context terms' covariance left out): within 3% of 2,000
    simulated rollouts."""
    s = scenario(REAL, *PROFILED)
    simulated = simulate(s, transport, 2000).e2e_s.mean()
    expected = float(expect(s, transport).e2e_s)
    assert expected == pytest.approx(simulated, rel=0.03)


def test_the_kv_store_evicts_the_least_recently_used_past_its_budget() -> None:
    store = KvStore(budget_bytes=100)
    for name in "abc":
        store.put(name, Snapshot((1, 2), bytes(40)))
    assert "a" not in store and {"b", "c"} <= {n for n in "abc" if n in store}
    assert store.take("b") is not None
    store.put("d", Snapshot((3,), bytes(40)))
    assert "c" not in store and "b" in store and "d" in store
    assert store.used_bytes == 80 and store.evictions == 2
    store.put("huge", Snapshot((), bytes(101)))
    assert "huge" not in store and store.used_bytes == 80


def test_a_linear_fit_recovers_known_coefficients_within_its_ci() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 10, 200)
    y = 0.5 + 2.0 * x + rng.normal(0, 0.1, x.size)
    fit = linear_fit(("a", "b"), np.column_stack([np.ones_like(x), x]), y)
    assert abs(fit["a"] - 0.5) < fit.half_width("a") * 2
    assert abs(fit["b"] - 2.0) < fit.half_width("b") * 2
    assert fit.r2 > 0.99 and fit.n == 200
    assert "n=200" in fit.describe("y = a + b x")


def test_a_profile_file_applies_its_fields_to_a_scenario(tmp_path: Path) -> None:
    profile = read_profile(ROOT / "tests" / "data" / "bad" / "profile-small.toml")
    s = profile.apply(scenario(REAL))
    assert s.inference.prefill_tps == 300.0 and s.inference.prefix_reuse_needs_state
    assert s.api.render_cache_hit_prob == 0.0
    written = tmp_path / "again.toml"
    profile.write(written)
    assert read_profile(written).apply(scenario(REAL)) == s


def test_a_broken_profile_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[inference\n")
    with pytest.raises(ScenarioError, match=r"broken\.toml"):
        read_profile(broken)
