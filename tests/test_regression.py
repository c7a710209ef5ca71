"""Pinned results of small runs, to 12 significant digits.

These values must change only with an intended change of the model (a cost
formula, a preset, the order or kind of random draws). When they do, recompute
them, and say in the commit message why the numbers moved.
"""

from __future__ import annotations

from support import scenario

from sim.analytic.agent.engine import expect
from sim.des.runners import simulate
from sim.turn.transports import Transport


def significant(value: float) -> str:
    return f"{value:.12g}"


def test_pinned_des_run() -> None:
    """codex-spark:ws, 50 rollouts, seed 7."""
    records = simulate(scenario("codex-spark", "seed=7"), Transport.WS, 50)
    assert records.turns.sum() == 1500
    assert significant(float(records.e2e_s.mean())) == "13.4255037121"


def test_pinned_analytic_expectation() -> None:
    """codex-spark:http, closed form (no random draws)."""
    assert significant(expect(scenario("codex-spark"), Transport.HTTP).e2e_s) == "21.5321240454"
