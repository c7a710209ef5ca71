"""A tool started on the function call item: the post work it hides adds up, the critical
path still equals the end to end, and the analytic engine agrees with the DES."""

from __future__ import annotations

import numpy as np
import pytest
from support import scenario

from models.costs import post_cpu_s, stage_costs
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.turn.transports import Transport, turn_work

EARLY = "client.tool_starts_on_call_item=true"


def test_only_the_post_work_beyond_the_tool_stays_on_the_critical_path() -> None:
    s = scenario("codex-spark", EARLY, "api.post_fixed_ms=400.0")
    turns = draw_turns(s, 0, 32)
    warm = turn_work(s, Transport.HTTP, turns)[1]
    costs = stage_costs(s, warm)
    post = post_cpu_s(s.api, warm.post_runs, warm.post_tokens)
    on_path = costs.stage_s[Stage.POST]
    np.testing.assert_allclose(on_path, np.maximum(0.0, post - turns.tool_s), rtol=1e-12)
    np.testing.assert_allclose(on_path + costs.post_overlapped_s, post, rtol=1e-12)
    assert np.all(on_path[turns.is_last == 1] == post[turns.is_last == 1])


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_the_critical_path_still_equals_the_end_to_end(transport: Transport) -> None:
    records = simulate(scenario("codex-spark", EARLY), transport, 128)
    np.testing.assert_allclose(records.stage_s.sum(axis=1), records.e2e_s, rtol=1e-9)


def test_websocket_post_work_is_already_off_the_path() -> None:
    assert expect(scenario("codex-spark", EARLY), Transport.WS).e2e_s == pytest.approx(
        expect(scenario("codex-spark"), Transport.WS).e2e_s, rel=1e-12
    )


def test_the_analytic_hidden_post_work_agrees_with_the_des() -> None:
    """Paired on common random numbers: the saving in the post stage."""
    on, off = scenario("codex-spark", EARLY), scenario("codex-spark")
    post = STAGE_COLUMN[Stage.POST]
    saving = (
        simulate(off, Transport.HTTP, 1024).stage_s[:, post]
        - simulate(on, Transport.HTTP, 1024).stage_s[:, post]
    )
    expected = expect(off, Transport.HTTP).stage_s[post] - expect(on, Transport.HTTP).stage_s[post]
    assert expected > 0
    assert abs(saving.mean() - expected) < 3 * saving.std() / np.sqrt(saving.size) + 1e-3 * expected
