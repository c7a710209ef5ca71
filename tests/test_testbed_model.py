"""The testbed's pieces that need no server: time scaling, the emulator's scopes of work, the
scripted model's draws and the agent's prompt, each checked against the model they mirror."""

from __future__ import annotations

import numpy as np
import pytest
from support import scenario

from models.costs import stage_costs
from models.stages import STAGES, Stage
from sim.analytic.agent.engine import expect
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.testbed.agent import Prompt
from sim.testbed.protocol import padded, text_of, tokens_in, tools_text
from sim.testbed.script import Script
from sim.testbed.server_phases import SERVER_PHASES
from sim.testbed.timescale import factor_of, scale_time
from sim.testbed.work import Processed, Source, request_work
from sim.turn.transports import Transport, turn_work

SERVER_STAGES = tuple(s for s in STAGES if s.group.value in {"api", "safety", "inference"})


@pytest.mark.parametrize("transport", list(Transport), ids=str)
@pytest.mark.parametrize("time_scale", [0.1, 2.0])
def test_scaling_time_scales_every_expected_stage_and_keeps_cache_loss(
    transport: Transport, time_scale: float
) -> None:
    base = scenario("codex-spark")
    scaled = scale_time(base, time_scale)
    before, after = expect(base, transport), expect(scaled, transport)
    np.testing.assert_allclose(after.stage_s, time_scale * before.stage_s, rtol=1e-9, atol=1e-12)
    assert after.cold_turns == pytest.approx(before.cold_turns, rel=1e-9)


def test_scaled_draws_are_the_unscaled_draws_times_the_scale() -> None:
    base = scenario("codex-spark")
    records, scaled = (
        simulate(base, Transport.WS, 20),
        simulate(scale_time(base, 0.1), Transport.WS, 20),
    )
    np.testing.assert_allclose(scaled.e2e_s, 0.1 * records.e2e_s, rtol=1e-9)
    np.testing.assert_array_equal(scaled.cold_turns, records.cold_turns)


def test_units_in_names_say_how_a_field_scales() -> None:
    assert factor_of("rtt_ms", 0.5) == 0.5
    assert factor_of("uplink_bytes_per_s", 0.5) == 2.0
    assert factor_of("decode_tps", 0.5) == 2.0
    assert factor_of("ws_drops_per_hour", 0.5) == 2.0
    assert factor_of("bytes_per_token", 0.5) == 1.0
    with pytest.raises(ValueError, match=r"--time-scale = 0\.0: must be"):
        scale_time(scenario("codex-spark"), 0.0)


def _processed(turns, row: int, source: Source, http: bool, fixed_changed: bool = False):
    return Processed(
        http=http,
        source=source,
        items_new=1,
        items_in_context=int(turns.context_items[row]),
        fixed_tokens=turns.fixed_tokens,
        new_tokens=float(turns.new_tokens[row]),
        prior_tokens=float(turns.prior_tokens[row]),
        fixed_changed=fixed_changed,
        render_hit=bool(turns.render_hit[row]),
        output_tokens=float(turns.output_tokens[row]),
        decode_s_per_token=float(turns.decode_s_per_token[row]),
    )


CASES = {
    # transport, variant the simulation takes, where the server finds the previous state
    "http": (Transport.HTTP, "warm", Source.STORE, True),
    "http-full": (Transport.HTTP_FULL, "warm", Source.NONE, True),
    "ws warm": (Transport.WS, "warm", Source.CACHE, False),
    "ws after a cache loss": (Transport.WS, "cold", Source.STORE, False),
}


@pytest.mark.parametrize("case", list(CASES), ids=str)
def test_the_emulator_charges_what_the_simulation_charges_for_the_same_turn(case: str) -> None:
    transport, variant, source, http = CASES[case]
    base = scenario("codex-spark")
    turns = draw_turns(base, 0, 3)
    cold, warm = turn_work(base, transport, turns)
    model = stage_costs(base, warm if variant == "warm" else cold)
    rows = [int(r) for r in np.flatnonzero(turns.turn_index > 0)[:40]]
    for row in rows:
        served = stage_costs(base, request_work(base, _processed(turns, row, source, http)))
        for stage in SERVER_STAGES:
            assert served.stage_s[stage][0] == pytest.approx(model.stage_s[stage][row]), stage
        overlapped = served.post_overlapped_s[0]
        assert overlapped == pytest.approx(model.post_overlapped_s[row])


def test_a_cache_hit_with_new_instructions_renders_them_again() -> None:
    base = scenario("codex-spark")
    turns = draw_turns(base, 0, 1)
    same = request_work(base, _processed(turns, 3, Source.CACHE, False))
    changed = request_work(base, _processed(turns, 3, Source.CACHE, False, fixed_changed=True))
    assert changed.tokens_rendered[0] == pytest.approx(same.tokens_rendered[0] + turns.fixed_tokens)


def test_the_scripted_model_calls_the_tools_the_simulation_drew() -> None:
    """Every turn but the last calls the tool kind the DES drew for it (``tests/test_draws``
    checks the drawn kinds against an independent drawing of the streams)."""
    base = scenario("codex-spark")
    turns, script = draw_turns(base, 0, 50), Script(base)
    names = [tool.name for tool in base.workload.tools]
    for rollout in range(50):
        first, end = int(turns.offsets[rollout]), int(turns.offsets[rollout + 1])
        for turn in range(end - first - 1):
            kind = int(turns.tool_kind[first + turn])
            assert script.turn(rollout, turn).tool_name == names[kind]
        assert script.turn(rollout, end - first - 1).tool_name == ""


def test_the_script_follows_the_draws_and_answers_on_the_last_turn() -> None:
    base = scenario("codex-spark")
    turns, script = draw_turns(base, 0, 2), Script(base)
    last = int(turns.offsets[1]) - 1
    plan = script.turn(0, last)
    assert plan.is_last and not script.turn(0, 0).is_last
    assert plan.output_tokens == turns.output_tokens[last]
    assert script.turn(1, 0).decode_s_per_token == turns.decode_s_per_token[last + 1]
    assert script.turn(0, last + 5).is_last


def test_the_agents_prompt_carries_the_scenarios_tokens() -> None:
    base = scenario("codex-spark")
    prompt, per_token = Prompt.of(base), base.network.bytes_per_token
    w = base.workload
    fixed = tokens_in(prompt.instructions + tools_text(prompt.tools), per_token)
    assert fixed == pytest.approx(w.instructions_tokens + w.tool_definitions_tokens, abs=1)
    assert tokens_in(prompt.task, per_token) == pytest.approx(w.first_message_tokens, abs=0.5)
    arguments = padded(437, wrap="input")
    assert len(arguments) == 437
    assert text_of({"type": "function_call", "arguments": arguments}) == arguments


def test_the_stage_table_has_no_server_stage_the_emulator_skips() -> None:
    """Every server stage is a phase the emulator runs, and no client stage is: the queue
    is the waits themselves, and a compaction is a request of its own, not a phase."""
    served = {stage for phase in SERVER_PHASES for stage in phase.stages}
    assert served == set(SERVER_STAGES) - {Stage.QUEUE, Stage.COMPACT}
