"""Each stage's cost function against its formula written out by hand.

The work is built by hand (three turns exercising different branches); the
expected seconds are written from the parameter names, so a changed formula in
``models/costs.py`` shows up here as a mismatch of a named stage.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from support import scenario

from models.costs import Work, stage_costs
from models.scenario import Scenario
from models.stages import FIRST_TOKEN_STAGES, STAGES, Stage

MS = 1e-3

TURNS = {
    "items_new": [1, 1, 1],
    "items_sent": [1, 7, 13],
    "tokens_sent": [10_400, 500, 12_000],
    "http_request": [1, 0, 1],
    "connect_http": [1, 0, 0],
    "connect_ws": [0, 1, 0],
    "recover": [0, 1, 0],
    "validate_runs": [1, 1, 0],
    "items_validated": [1, 7, 0],
    "store_loads": [0, 1, 0],
    "store_state_tokens": [0, 2048, 0],
    "memory_loads": [0, 0, 1],
    "tokens_rendered": [10_400, 500, 12_000],
    "route_full": [1, 0, 0],
    "route_cached": [0, 1, 0],
    "hop_runs": [1, 0, 1],
    "safety_runs": [1, 1, 0],
    "tokens_classified": [10_400, 200_000, 0],
    "prompt_tokens_uncached": [10_400, 500, 1_200],
    "output_tokens": [100, 200, 50],
    "decode_s_per_token": [1e-3, 5e-4, 1 / 65],
    "post_runs": [1, 1, 0],
    "post_tokens": [100, 200, 50],
    "post_blocking": [1, 0, 0],
    "tool_s": [0.5, 0.0, 2.0],
}
"""Turn 0: a cold HTTP turn. Turn 1: a cold WebSocket turn that failed its continuation,
with so much to classify that parallel safety outlasts prefill. Turn 2: a warm turn."""


def work(**changes: list[float]) -> Work:
    table = {**TURNS, **changes}
    return Work(**{name: np.asarray(values, dtype=float) for name, values in table.items()})


def test_the_hand_built_work_sets_every_field() -> None:
    assert set(TURNS) == {f.name for f in fields(Work)}


@pytest.fixture(params=["codex-spark", "responses-2025", "gpt5-flagship"])
def preset(request: pytest.FixtureRequest) -> Scenario:
    return scenario(request.param)


def column(name: str) -> np.ndarray:
    return np.asarray(TURNS[name], dtype=float)


def expected_stages(s: Scenario) -> dict[Stage, np.ndarray]:
    """Every stage of the three turns, written out from the parameter names."""
    c, n, a, sf, i = s.client, s.network, s.api, s.safety, s.inference
    rtt_s = n.rtt_ms * MS
    handshake_s = (n.tcp_handshake_rtts + n.tls_handshake_rtts) * rtt_s + n.tls_crypto_ms * MS
    upgrade_s = n.ws_upgrade_rtts * rtt_s + c.ws_handshake_ms * MS
    prefill = column("prompt_tokens_uncached") / i.prefill_tps + i.overhead_ms * MS
    blocking = (
        column("safety_runs") * sf.blocking_fixed_ms
        + sf.blocking_per_1k_tokens_ms * column("tokens_classified") / 1000
    ) * MS
    parallel = (
        column("safety_runs") * sf.parallel_fixed_ms
        + sf.parallel_per_1k_tokens_ms * column("tokens_classified") / 1000
    ) * MS
    post_cpu = (
        column("post_runs") * a.post_fixed_ms
        + a.post_per_1k_tokens_ms * column("post_tokens") / 1000
    ) * MS
    failed_attempt = (
        rtt_s
        + (c.build_fixed_ms + c.build_per_item_ms * column("items_new")) * MS
        + (a.validate_fixed_ms + a.memory_state_ms) * MS
    )
    return {
        Stage.CLIENT_BUILD: (c.build_fixed_ms + c.build_per_item_ms * column("items_sent")) * MS,
        Stage.CONNECT: column("connect_http") * handshake_s
        + column("connect_ws") * (handshake_s + upgrade_s),
        Stage.RECOVER: column("recover") * failed_attempt,
        Stage.UPLOAD: rtt_s / 2
        + (n.request_overhead_bytes + column("tokens_sent") * n.bytes_per_token)
        / n.uplink_bytes_per_s
        + column("http_request") * c.http_request_overhead_ms * MS,
        Stage.VALIDATE: (
            column("validate_runs") * a.validate_fixed_ms
            + a.validate_per_item_ms * column("items_validated")
        )
        * MS,
        Stage.STATE_LOAD: (
            column("store_loads") * a.state_store_fixed_ms
            + a.state_store_per_kb_ms
            * column("store_state_tokens")
            * a.state_bytes_per_token
            / 1024
            + column("memory_loads") * a.memory_state_ms
        )
        * MS,
        Stage.RENDER: a.render_per_1k_tokens_ms * column("tokens_rendered") / 1000 * MS,
        Stage.ROUTE: (
            column("route_full") * a.route_ms + column("route_cached") * a.route_cached_ms
        )
        * MS,
        Stage.HOPS: column("hop_runs") * a.intermediate_hops * a.hop_ms * MS,
        Stage.SAFETY: blocking + np.maximum(0.0, parallel - prefill),
        Stage.QUEUE: np.zeros(3),
        Stage.PREFILL: prefill,
        Stage.DECODE: column("output_tokens") * column("decode_s_per_token"),
        Stage.POST: column("post_blocking") * post_cpu,
        Stage.DOWNLOAD: rtt_s / 2
        + column("output_tokens") * n.bytes_per_token / n.downlink_bytes_per_s,
        Stage.TOOL: column("tool_s"),
    }


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_equals_its_formula(preset: Scenario, stage: Stage) -> None:
    costs = stage_costs(preset, work())
    np.testing.assert_allclose(costs.stage_s[stage], expected_stages(preset)[stage], rtol=1e-12)


def test_the_hand_built_turns_exercise_the_branches() -> None:
    s = scenario("responses-2025")
    costs = stage_costs(s, work())
    sf = s.safety
    blocking = (
        sf.blocking_fixed_ms + sf.blocking_per_1k_tokens_ms * column("tokens_classified") / 1000
    ) * MS
    excess = costs.stage_s[Stage.SAFETY] - blocking
    assert excess[0] == pytest.approx(0.0, abs=1e-15), "prefill outlasts parallel safety"
    assert excess[1] > 0.1, "parallel classifiers over 200k tokens outlast prefill"
    assert costs.stage_s[Stage.HOPS][0] > 0 and costs.stage_s[Stage.HOPS][1] == 0
    assert np.all(costs.stage_s[Stage.RECOVER][[0, 2]] == 0) and costs.stage_s[Stage.RECOVER][1] > 0


def test_connect_in_round_trips_with_literal_numbers() -> None:
    s = scenario(
        "codex-spark",
        "network.rtt_ms=40",
        "network.tcp_handshake_rtts=1",
        "network.tls_handshake_rtts=1",
        "network.ws_upgrade_rtts=1",
        "network.tls_crypto_ms=2",
        "client.ws_handshake_ms=3.6",
    )
    connect = stage_costs(s, work()).stage_s[Stage.CONNECT]
    # HTTP: TCP + TLS = 2 RTT + 2 ms of key exchange; WS adds the upgrade RTT and 3.6 ms.
    np.testing.assert_allclose(connect, [0.082, 0.1256, 0.0], rtol=1e-12)


def test_ttft_is_the_stages_through_prefill_plus_half_a_round_trip(preset: Scenario) -> None:
    costs = stage_costs(preset, work())
    stages = expected_stages(preset)
    before_first_token = (
        Stage.CLIENT_BUILD,
        Stage.CONNECT,
        Stage.RECOVER,
        Stage.UPLOAD,
        Stage.VALIDATE,
        Stage.STATE_LOAD,
        Stage.RENDER,
        Stage.ROUTE,
        Stage.HOPS,
        Stage.SAFETY,
        Stage.QUEUE,
        Stage.PREFILL,
    )
    assert set(before_first_token) == set(FIRST_TOKEN_STAGES)
    through_prefill = sum(stages[stage] for stage in before_first_token)
    np.testing.assert_allclose(
        costs.ttft_s, through_prefill + preset.network.rtt_ms * MS / 2, rtol=1e-12
    )


def test_post_is_blocking_or_overlapped_and_never_lost(preset: Scenario) -> None:
    costs = stage_costs(preset, work())
    a = preset.api
    post_cpu = (
        column("post_runs") * a.post_fixed_ms
        + a.post_per_1k_tokens_ms * column("post_tokens") / 1000
    ) * MS
    np.testing.assert_allclose(costs.stage_s[Stage.POST] + costs.post_overlapped_s, post_cpu)
    assert costs.stage_s[Stage.POST][1] == 0.0
    assert costs.post_overlapped_s[0] == 0.0
    assert costs.post_overlapped_s[1] == pytest.approx(post_cpu[1], rel=1e-12)


def test_cpu_accounting(preset: Scenario) -> None:
    costs = stage_costs(preset, work())
    stages = expected_stages(preset)
    a, sf = preset.api, preset.safety
    post_cpu = costs.stage_s[Stage.POST] + costs.post_overlapped_s
    failed_api = column("recover") * (a.validate_fixed_ms + a.memory_state_ms) * MS
    api = (
        stages[Stage.VALIDATE]
        + stages[Stage.STATE_LOAD]
        + stages[Stage.RENDER]
        + stages[Stage.ROUTE]
        + post_cpu
        + failed_api
    )
    np.testing.assert_allclose(costs.api_cpu_s, api, rtol=1e-12)
    classified = column("tokens_classified") / 1000
    safety_cpu = (
        column("safety_runs") * (sf.blocking_fixed_ms + sf.parallel_fixed_ms)
        + (sf.blocking_per_1k_tokens_ms + sf.parallel_per_1k_tokens_ms) * classified
    ) * MS
    np.testing.assert_allclose(costs.safety_cpu_s, safety_cpu, rtol=1e-12)


def test_turn_is_the_sum_of_its_stages(preset: Scenario) -> None:
    costs = stage_costs(preset, work())
    total = sum(costs.stage_s[stage] for stage in STAGES)
    np.testing.assert_allclose(costs.turn_s, total, rtol=1e-12)
    np.testing.assert_allclose(costs.request_s, total - column("tool_s"), rtol=1e-12)


def test_costs_are_linear_in_the_work_except_the_safety_excess(preset: Scenario) -> None:
    """What lets the analytic engine evaluate costs at expected work."""
    cold, warm = work(), work(tokens_classified=[0, 0, 0], recover=[0.5, 0, 1])
    weight = np.array([0.3, 0.6, 0.9])
    mixed = stage_costs(preset, cold.blend(warm, weight))
    parts = stage_costs(preset, cold), stage_costs(preset, warm)
    for stage in STAGES:
        blended = weight * parts[0].stage_s[stage] + (1 - weight) * parts[1].stage_s[stage]
        if stage is Stage.SAFETY:
            assert np.all(mixed.stage_s[stage] <= blended + 1e-15), "max(0, x) is convex"
        else:
            np.testing.assert_allclose(mixed.stage_s[stage], blended, rtol=1e-12, err_msg=stage)
