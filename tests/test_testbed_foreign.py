"""The driver is a real agent loop: against a Responses server whose model decides for itself
(reasoning, one to three calls, a message beside them, a tool the client never declared, a
final answer at a turn count of its own) every transport completes, and the run reports what
it measured beside a simulation of the turns that actually happened."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pytest
from foreign_server import foreign_server
from support import CliResult, assert_one_line_error, scenario

from models.loading import load_scenario
from sim.des.draws import draw_turns
from sim.des.runners import simulate, simulate_turns
from sim.testbed.observed import observed_turns
from sim.testbed.records import RolloutRecord, TurnRecord
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
ROLLOUTS = 3
TRANSPORTS = ("http", "http-full", "ws")


@pytest.mark.live
def test_every_transport_completes_against_a_server_that_decides(cli: Cli) -> None:
    with foreign_server(seed=11) as (url, model):
        args = ("testbed", "codex-spark", "--base-url", url, "-n", str(ROLLOUTS))
        result = cli(*args, "--time-scale", "0.05", "--json")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    payload = json.loads(result.stdout)
    plans = model.plans
    assert len(plans) == ROLLOUTS * len(TRANSPORTS)
    for index, transport in enumerate(TRANSPORTS):
        entry = payload["transports"][transport]
        mine = plans[index * ROLLOUTS : (index + 1) * ROLLOUTS]
        requests = np.mean([len(p.calls_per_turn) + 1 for p in mine])
        calls = np.mean([sum(p.calls_per_turn) for p in mine])
        assert entry["observed"]["requests_per_rollout"] == pytest.approx(requests)
        assert entry["observed"]["calls_per_rollout"] == pytest.approx(calls)
        assert entry["observed"]["turn_limited"] == 0
        # The simulation ran the turns that happened, not the scenario's 20-40 calls.
        assert entry["simulated"]["requests_per_rollout"] == pytest.approx(requests)
        assert entry["measured"]["requests_per_rollout"] == pytest.approx(requests)
        assert entry["errors"] == 0
        assert entry["simulated"]["e2e_s"]["mean"] > 0


@pytest.mark.live
def test_a_turn_limit_stops_a_runaway_loop_with_a_clear_line(cli: Cli) -> None:
    with foreign_server(seed=11) as (url, model):
        args = ("testbed", "codex-spark:ws", "--base-url", url, "-n", str(ROLLOUTS))
        result = cli(*args, "--time-scale", "0.05", "--max-turns", "2")
    assert result.exit_code == 0, result.stderr
    stopped = sum(len(p.calls_per_turn) + 1 > 2 for p in model.plans)
    assert stopped > 0
    assert f"ws: {stopped} rollouts stopped at the turn limit" in result.stdout


def test_a_turn_limit_below_one_is_one_line(cli: Cli) -> None:
    assert_one_line_error(cli("testbed", "codex-spark", "--max-turns", "0"), "--max-turns", ">= 1")


def _observed_rollout(drawn_rows: range, rollout: int, turns_drawn: object) -> RolloutRecord:
    t = turns_drawn
    records = []
    for turn, row in enumerate(drawn_rows):
        record = TurnRecord(rollout, turn, 0.0)
        record.items_new, record.context_items = int(t.items_new[row]), int(t.context_items[row])
        record.new_tokens, record.prior_tokens = (
            float(t.new_tokens[row]),
            float(t.prior_tokens[row]),
        )
        record.output_tokens = float(t.output_tokens[row])
        record.drawn_tool_s = float(t.tool_s[row])
        records.append(record)
    return RolloutRecord(rollout, records)


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.HTTP_FULL, Transport.WS])
def test_observed_turns_that_are_the_drawn_ones_simulate_as_the_drawn_ones(
    transport: Transport,
) -> None:
    """The client's record of what happened, when it is what the scenario drew, gives the
    simulation of the drawn rollouts: same e2e and TTFT to rounding."""
    spark = scenario("codex-spark")
    drawn = draw_turns(spark, 0, 4)
    rollouts = [
        _observed_rollout(range(drawn.offsets[r], drawn.offsets[r + 1]), r, drawn) for r in range(4)
    ]
    observed = simulate_turns(spark, transport, observed_turns(spark, rollouts))
    expected = simulate(spark, transport, 4)
    np.testing.assert_allclose(observed.e2e_s, expected.e2e_s, rtol=1e-12)
    np.testing.assert_allclose(observed.turn_ttft_s, expected.turn_ttft_s, rtol=1e-12)


def test_simulating_given_turns_is_the_simulation_of_those_turns_bit_for_bit() -> None:
    spark = load_scenario("codex-spark", ("connection.ws_drops_per_hour=600",))
    for transport in Transport:
        given = simulate_turns(spark, transport, draw_turns(spark, 0, 6))
        assert (given.e2e_s == simulate(spark, transport, 6).e2e_s).all()
