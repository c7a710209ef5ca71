"""The parallel-safety excess E[max(0, parallel - prefill)] over the distribution of tokens.

Worked example (codex-spark, ``safety.parallel_per_1k_tokens_ms = 3``, HTTP, a
turn k >= 1 with N new and P prior tokens): the classifiers read
F + P + N tokens (F = 10,000 fixed tokens), prefill reads N + 0.1 (F + P) at
60,000 tokens/s after a 25 ms overhead, so

    M = (5 + 3 (F + P + N) / 1000) / 1000 - (N + 0.1 (F + P)) / 60000 - 0.025  s
    M(0, 0) = 0.035 - 0.041667 = -0.0066667 s,
    dM/dN = 3e-6 - 1 / 60000 = -1.3667e-5 s,  dM/dP = 3e-6 - 0.1 / 60000 = 1.3333e-6 s.

At the preset's 1 ms per 1k tokens dM/dP = 1e-6 - 1.6667e-6 < 0 and every
coefficient is negative: the excess is exactly zero.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import CORE_PRESETS, scenario

from models.costs import parallel_margin_s
from models.stages import STAGE_COLUMN, Stage
from sim.analysis.stats import mean_ci95
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect
from sim.analytic.agent.excess import expected_excess, margin_coefficients
from sim.analytic.agent.expectations import Approximation
from sim.analytic.agent.expected_draws import expected_draws
from sim.analytic.agent.layout import probe_turns, turn_count
from sim.des.runners import simulate
from sim.turn.transports import Transport, turn_work

SAFETY = STAGE_COLUMN[Stage.SAFETY]
PARALLEL_3 = "safety.parallel_per_1k_tokens_ms=3"


def margins(*overrides: str) -> list[tuple[np.ndarray, ...]]:
    """The margin's coefficients over HTTP (cold, warm) for codex-spark with ``overrides``."""
    columns = column_form([scenario("codex-spark", *overrides)])
    work = turn_work(columns, Transport.HTTP, probe_turns(columns, expected_draws(columns)))
    return margin_coefficients(columns, [parallel_margin_s(columns, w) for w in work])


def test_the_margin_coefficients_come_from_the_cost_model() -> None:
    for zero, intercept, slope_new, slope_prior in margins(PARALLEL_3):
        assert not zero[0]
        assert intercept[0] == pytest.approx(0.035 - 0.1 * 10_000 / 60_000 - 0.025, rel=1e-9)
        assert slope_new[0] == pytest.approx(3e-6 - 1 / 60_000, rel=1e-9)
        assert slope_prior[0] == pytest.approx(3e-6 - 0.1 / 60_000, rel=1e-9)
    for zero, _, _, slope_prior in margins():
        assert zero[0] and slope_prior[0] == pytest.approx(1e-6 - 0.1 / 60_000, rel=1e-9)


@pytest.mark.parametrize("preset", CORE_PRESETS)
def test_the_presets_have_no_excess_exactly(preset: str) -> None:
    """Without the parallel classifiers' time the budget is the same to the last bit."""
    without = scenario(preset, "safety.parallel_fixed_ms=0", "safety.parallel_per_1k_tokens_ms=0")
    for transport in Transport:
        found = expect(scenario(preset), transport)
        assert Approximation.PARALLEL_EXCESS not in found.approximations
        assert np.array_equal(found.stage_s, expect(without, transport).stage_s)


def test_the_quadrature_over_prior_tokens_against_a_large_monte_carlo() -> None:
    """Turn by turn against 200,000 draws of N and P: within 0.5% summed over 40 turns."""
    s = scenario("codex-spark", PARALLEL_3, "workload.tool_calls_per_rollout=40")
    columns = column_form([s])
    draws = expected_draws(columns)
    count = turn_count(draws.tool_calls)
    _, intercept, per_new, per_prior = margins(PARALLEL_3, "workload.tool_calls_per_rollout=40")[1]
    found = expected_excess(columns, draws, count, np.array([0]), intercept, per_new, per_prior)[0]
    rng = np.random.default_rng(7)
    w = s.workload
    draws_n = 200_000

    def tool_output() -> np.ndarray:
        kinds = rng.choice(len(w.tools), draws_n, p=w.tool_probabilities())
        out = np.empty(draws_n)
        for index, tool in enumerate(w.tools):
            chosen = kinds == index
            out[chosen] = tool.output_tokens.sample(rng, int(chosen.sum()))
        return out

    prior = np.full(draws_n, w.first_message_tokens)
    drawn = []
    for k in range(1, 41):
        prior = prior + w.output_tokens.sample(rng, draws_n)
        if k >= 2:
            prior = prior + tool_output()
        margin = intercept[0] + per_new[0] * tool_output() + per_prior[0] * prior
        drawn.append(np.maximum(margin, 0.0).mean())
    drawn = np.array(drawn)
    assert found[0] == 0.0
    assert found[1:].sum() == pytest.approx(drawn.sum(), rel=5e-3)
    assert np.max(np.abs(found[1:] - drawn)) < 1e-4, "within 0.1 ms on every turn"


def test_the_excess_agrees_with_the_paired_des() -> None:
    """DES, 4,000 rollouts at the preset seed: the safety stage with 3 ms per 1k tokens minus
    the same rollouts' with 1 (whose excess is zero) is the excess; the old value at
    expected work (0.167 s) is far outside its interval."""
    with_excess = scenario("codex-spark", PARALLEL_3)
    without = scenario("codex-spark")
    paired = (
        simulate(with_excess, Transport.HTTP, 4000).stage_s[:, SAFETY]
        - simulate(without, Transport.HTTP, 4000).stage_s[:, SAFETY]
    )
    found = expect(with_excess, Transport.HTTP)
    excess_s = found.stage_s[SAFETY] - expect(without, Transport.HTTP).stage_s[SAFETY]
    low, high = mean_ci95(paired)
    assert low <= excess_s <= high
    assert low > 0.2
    assert Approximation.PARALLEL_EXCESS in found.approximations
