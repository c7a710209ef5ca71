"""Each stage's cost against numbers worked out by hand for a small, round scenario.

The scenario (``ROUND``) sets every parameter the cost functions read: rtt 30 ms, so
half a round trip is 15 ms; TCP and TLS one round trip each plus 2 ms of key exchange,
so an HTTP connect is 2 x 30 + 2 = 62 ms, and the WebSocket upgrade adds 30 + 4 = 34 ms
(96 ms); uplink 1 MB/s (1 ms per 1,000 bytes), downlink 4 MB/s, 4 bytes per token, 1,000
bytes of headers; client build 1 ms + 0.5 ms per item sent, 2 ms per HTTP request;
validation 2 ms + 0.5 ms per item; state from storage 20 ms + 0.25 ms per KB at 4 bytes
per token (2,048 tokens = 8 KB), 1 ms from the connection's memory; render 10 ms per 1k
tokens; route 30 ms, 3 ms cached; two hops of 15 ms; blocking safety 10 ms + 1 ms per 1k
tokens, parallel safety 20 ms + 2 ms per 1k; prefill 20,000 tokens/s + 5 ms; post 20 ms +
100 ms per 1k output tokens.

The four turns (``TURNS``) and their costs in ms:

- Turn 0, a cold first HTTP turn: 1 item, 10,000 tokens sent, rendered and classified
  and prefilled, full route, hops, 100 output tokens at 1 ms each, blocking post, 0.5 s
  tool.  build 1 + 0.5 = 1.5; connect 62; upload 15 + (1,000 + 40,000) / 1,000 + 2 = 58;
  validate 2 + 0.5 = 2.5; render 100; route 30; hops 30; prefill 500 + 5 = 505; safety
  10 + 10 = 20 (parallel 20 + 20 = 40 < 505: no excess); decode 100; post 20 + 10 = 30;
  download 15 + 100 x 4 / 4,000 = 15.1.  TTFT = 809 + 15 = 824; turn 809 + 100 + 30 +
  15.1 + 500 = 1,454.1; API work 2.5 + 100 + 30 + 30 = 162.5; safety work 20 + 40 = 60.
- Turn 1, a warm HTTP turn: 1 item and 10,800 tokens sent, 7 items validated, 2,048
  tokens of state from storage, 12,000 tokens rendered and classified, 2,000 prefilled,
  cached route, hops, 200 output tokens at 0.5 ms, blocking post, 2 s tool.  build 1.5;
  upload 15 + 44.2 + 2 = 61.2; validate 2 + 3.5 = 5.5; state 20 + 0.25 x 8 = 22; render
  120; route 3; hops 30; prefill 100 + 5 = 105; safety 10 + 12 = 22 (parallel 44 < 105);
  decode 100; post 20 + 20 = 40; download 15.2.  TTFT 370.2 + 15 = 385.2; turn 370.2 +
  100 + 40 + 15.2 + 2,000 = 2,525.4; API work 5.5 + 22 + 120 + 3 + 40 = 190.5; safety
  work 22 + 44 = 66.  Its tool starts on the call item, so the 2 s tool hides all 40 ms
  of post (0 on the path, 40 overlapped), and one attempt failed before inference
  (build 1.5 + upload 61.2 + validate 5.5 + 15 back = 83.2) with a 500 ms backoff:
  retry 583.2, TTFT 968.4, turn 2,525.4 - 40 + 583.2 = 3,068.6.
- Turn 2, a cold WebSocket turn whose continuation failed (store=false): the failed
  attempt costs 30 + 1.5 + 2 + 1 = 34.5; then 7 items and 12,000 tokens resent, 7 items
  validated, 12,000 rendered and classified, only 500 prefilled, cached route, hops, 50
  output tokens at 20 ms, post overlapped, 1 s tool.  build 1 + 3.5 = 4.5; connect 96;
  upload 15 + 49 = 64; validate 5.5; render 120; route 3; hops 30; prefill 25 + 5 = 30;
  safety 22 + (44 - 30) = 36, the parallel classifiers outlasting prefill by 14; decode
  1,000; post 0 (25 overlapped); download 15.05.  TTFT 423.5 + 15 = 438.5; turn 423.5 +
  1,000 + 15.05 + 1,000 = 2,438.55; API work 5.5 + 120 + 3 + 25 + (2 + 1) = 156.5;
  safety work 66.
- Turn 3, a warm WebSocket turn, the last: 1 item and 10,800 tokens sent, 1 validated,
  state from memory, 800 new tokens rendered and classified, 1,000 prefilled, no route,
  no hops, 150 output tokens at 1 ms, post overlapped, no tool.  build 1.5; upload 15 +
  44.2 = 59.2; validate 2.5; state 1; render 8; prefill 50 + 5 = 55; safety 10 + 0.8 =
  10.8; decode 150; post 0 (20 + 15 = 35 overlapped); download 15.15.  TTFT 138 + 15 =
  153; turn 138 + 150 + 15.15 = 303.15; API work 2.5 + 1 + 8 + 35 = 46.5; safety work
  10.8 + 21.6 = 32.4.  Two attempts failed after prefill, each costing the request up to
  its first token (138) and 15 back, with 1,250 ms of backoff: retry 2 x 153 + 1,250 =
  1,556, TTFT 1,709, turn 1,859.15.

A changed formula in ``models/costs.py`` shows up as a mismatch of a named stage.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from support import scenario

from models.costs import stage_costs
from models.scenario import Scenario
from models.stages import STAGES, Stage
from models.work import Work

MS = 1e-3

ROUND = {
    "client.build_fixed_ms": 1.0,
    "client.build_per_item_ms": 0.5,
    "client.http_request_overhead_ms": 2.0,
    "client.ws_handshake_ms": 4.0,
    "network.rtt_ms": 30.0,
    "network.uplink_bytes_per_s": 1e6,
    "network.downlink_bytes_per_s": 4e6,
    "network.bytes_per_token": 4.0,
    "network.request_overhead_bytes": 1000.0,
    "network.tcp_handshake_rtts": 1.0,
    "network.tls_handshake_rtts": 1.0,
    "network.ws_upgrade_rtts": 1.0,
    "network.tls_crypto_ms": 2.0,
    "api.validate_fixed_ms": 2.0,
    "api.validate_per_item_ms": 0.5,
    "api.state_store_fixed_ms": 20.0,
    "api.state_store_per_kb_ms": 0.25,
    "api.state_bytes_per_token": 4.0,
    "api.memory_state_ms": 1.0,
    "api.render_per_1k_tokens_ms": 10.0,
    "api.route_ms": 30.0,
    "api.route_cached_ms": 3.0,
    "api.intermediate_hops": 2,
    "api.hop_ms": 15.0,
    "api.post_fixed_ms": 20.0,
    "api.post_per_1k_tokens_ms": 100.0,
    "safety.blocking_fixed_ms": 10.0,
    "safety.blocking_per_1k_tokens_ms": 1.0,
    "safety.parallel_fixed_ms": 20.0,
    "safety.parallel_per_1k_tokens_ms": 2.0,
    "inference.prefill_tps": 20_000.0,
    "inference.overhead_ms": 5.0,
    "inference.prefill_ms_per_token_per_1k_context_tokens": 0.0,
    "inference.decode_ms_per_token_per_1k_context_tokens": 0.0,
}
NOT_READ_BY_THE_COSTS = {
    "client.keepalive_idle_s",
    "client.parallel_call_overhead_ms",
    "client.tool_starts_on_call_item",
    "api.render_cache_hit_prob",
    "api.config_cache",
    "inference.hardware",
    "inference.decode_tps",
    "inference.prefix_cache_hit_fraction",
    "inference.prefix_reuse_needs_state",
    "inference.kv_memory_bytes",
    "inference.kv_bytes_per_token",
}
"""Parameters that shape the work (cache hits, draws, connections, KV residency), not its
price."""

TURNS = {
    "items_new": [1, 1, 1, 1],
    "items_sent": [1, 1, 7, 1],
    "tokens_sent": [10_000, 10_800, 12_000, 10_800],
    "http_request": [1, 1, 0, 0],
    "connect_http": [1, 0, 0, 0],
    "connect_ws": [0, 0, 1, 0],
    "recover": [0, 0, 1, 0],
    "validate_runs": [1, 1, 1, 1],
    "items_validated": [1, 7, 7, 1],
    "store_loads": [0, 1, 0, 0],
    "store_state_tokens": [0, 2048, 0, 0],
    "memory_loads": [0, 0, 0, 1],
    "tokens_rendered": [10_000, 12_000, 12_000, 800],
    "route_full": [1, 0, 0, 0],
    "route_cached": [0, 1, 1, 0],
    "hop_runs": [1, 1, 1, 0],
    "safety_runs": [1, 1, 1, 1],
    "tokens_classified": [10_000, 12_000, 12_000, 800],
    "prompt_tokens_uncached": [10_000, 2_000, 500, 1_000],
    "prompt_tokens": [10_000, 12_000, 12_000, 12_000],
    "output_tokens": [100, 200, 50, 150],
    "decode_s_per_token": [1e-3, 5e-4, 2e-2, 1e-3],
    "post_runs": [1, 1, 1, 1],
    "post_tokens": [100, 200, 50, 150],
    "post_blocking": [1, 1, 0, 0],
    "tool_overlaps_post": [0, 1, 0, 0],
    "tool_s": [0.5, 2.0, 1.0, 0.0],
    "failed_early": [0, 1, 0, 0],
    "failed_late": [0, 0, 0, 2],
    "retry_wait_s": [0, 0.5, 0, 1.25],
    "compactions": [0, 0, 0, 0],
}
"""Cold HTTP, warm HTTP, cold WebSocket after a failed continuation, warm WebSocket."""

WORKED_MS = {
    Stage.COMPACT: [0, 0, 0, 0],
    Stage.RETRY: [0, 583.2, 0, 1556],
    Stage.CLIENT_BUILD: [1.5, 1.5, 4.5, 1.5],
    Stage.CONNECT: [62, 0, 96, 0],
    Stage.RECOVER: [0, 0, 34.5, 0],
    Stage.UPLOAD: [58, 61.2, 64, 59.2],
    Stage.VALIDATE: [2.5, 5.5, 5.5, 2.5],
    Stage.STATE_LOAD: [0, 22, 0, 1],
    Stage.RENDER: [100, 120, 120, 8],
    Stage.ROUTE: [30, 3, 3, 0],
    Stage.HOPS: [30, 30, 30, 0],
    Stage.SAFETY: [20, 22, 36, 10.8],
    Stage.QUEUE: [0, 0, 0, 0],
    Stage.PREFILL: [505, 105, 30, 55],
    Stage.DECODE: [100, 100, 1000, 150],
    Stage.POST: [30, 0, 0, 0],
    Stage.DOWNLOAD: [15.1, 15.2, 15.05, 15.15],
    Stage.TOOL: [500, 2000, 1000, 0],
}
TTFT_MS = [824, 968.4, 438.5, 1709]
TURN_MS = [1454.1, 3068.6, 2438.55, 1859.15]
API_WORK_MS = [162.5, 190.5, 156.5, 46.5]
SAFETY_WORK_MS = [60, 66, 66, 32.4]
POST_OVERLAPPED_MS = [0, 40, 25, 35]


def work(**changes: list[float]) -> Work:
    table = {**TURNS, **changes}
    return Work(**{name: np.asarray(values, dtype=float) for name, values in table.items()})


def round_scenario() -> Scenario:
    return scenario("codex-spark", *(f"{path}={value!r}" for path, value in ROUND.items()))


def test_the_hand_built_work_sets_every_field() -> None:
    assert set(TURNS) == {f.name for f in fields(Work)}


def test_the_round_scenario_sets_every_price_the_costs_read() -> None:
    s = round_scenario()
    priced = {
        f"{section}.{name}"
        for section in ("client", "network", "api", "safety", "inference")
        for name in type(getattr(s, section)).model_fields
    }
    assert priced - NOT_READ_BY_THE_COSTS == set(ROUND)


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_equals_its_worked_example(stage: Stage) -> None:
    costs = stage_costs(round_scenario(), work())
    np.testing.assert_allclose(costs.stage_s[stage] / MS, WORKED_MS[stage], rtol=1e-12, atol=1e-12)


def test_ttft_turn_and_work_equal_their_worked_examples() -> None:
    costs = stage_costs(round_scenario(), work())
    for name, value, expected in (
        ("ttft", costs.ttft_s, TTFT_MS),
        ("turn", costs.turn_s, TURN_MS),
        ("request", costs.request_s, np.subtract(TURN_MS, WORKED_MS[Stage.TOOL])),
        ("api work", costs.api_cpu_s, API_WORK_MS),
        ("safety work", costs.safety_cpu_s, SAFETY_WORK_MS),
        ("post overlapped", costs.post_overlapped_s, POST_OVERLAPPED_MS),
    ):
        np.testing.assert_allclose(value / MS, expected, rtol=1e-12, err_msg=name)


def test_context_terms_equal_their_worked_example() -> None:
    """Prefill: 0.5 ms a token a 1k of context, 2,000 tokens prefilled after 10,000 (mean
    context 11,000): 0.5 x 2,000 x 11 = 11,000 ms more.  Decode: 2 ms a token a 1k, 200
    tokens after a 12,000-token prompt (mean context 12,100): 2 x 200 x 12.1 = 4,840 ms."""
    base = stage_costs(round_scenario(), work())
    slowed = stage_costs(
        scenario(
            "codex-spark",
            *(f"{path}={value!r}" for path, value in ROUND.items()),
            "inference.prefill_ms_per_token_per_1k_context_tokens=0.5",
            "inference.decode_ms_per_token_per_1k_context_tokens=2.0",
        ),
        work(),
    )
    extra_ms = {
        stage: (slowed.stage_s[stage][1] - base.stage_s[stage][1]) / MS
        for stage in (Stage.PREFILL, Stage.DECODE)
    }
    assert extra_ms[Stage.PREFILL] == pytest.approx(11_000, rel=1e-12)
    assert extra_ms[Stage.DECODE] == pytest.approx(4_840, rel=1e-12)


@pytest.fixture(params=["codex-spark", "responses-2025", "gpt5-flagship"])
def preset(request: pytest.FixtureRequest) -> Scenario:
    return scenario(request.param)


def test_turn_is_the_sum_of_its_stages(preset: Scenario) -> None:
    costs = stage_costs(preset, work())
    total = sum(costs.stage_s[stage] for stage in STAGES)
    np.testing.assert_allclose(costs.turn_s, total, rtol=1e-12)
    np.testing.assert_allclose(costs.request_s, total - np.asarray(TURNS["tool_s"]), rtol=1e-12)


def test_post_is_blocking_or_overlapped_and_never_lost(preset: Scenario) -> None:
    """Switching post-inference work off the critical path moves it, it does not remove it."""
    blocking = stage_costs(preset, work(post_blocking=[1, 1, 1, 1], tool_overlaps_post=[0] * 4))
    overlapped = stage_costs(preset, work(post_blocking=[0, 0, 0, 0]))
    np.testing.assert_allclose(overlapped.post_overlapped_s, blocking.stage_s[Stage.POST])
    assert np.all(overlapped.stage_s[Stage.POST] == 0) and np.all(blocking.post_overlapped_s == 0)
    np.testing.assert_allclose(overlapped.api_cpu_s, blocking.api_cpu_s, rtol=1e-12)


def test_costs_are_linear_in_the_work_except_the_safety_excess(preset: Scenario) -> None:
    """What lets the analytic engine evaluate costs at expected work."""
    cold, warm = work(), work(tokens_classified=[0, 0, 0, 0], recover=[0.5, 0, 1, 0])
    weight = np.array([0.3, 0.6, 0.9, 0.5])
    mixed = stage_costs(preset, cold.blend(warm, weight))
    parts = stage_costs(preset, cold), stage_costs(preset, warm)
    for stage in STAGES:
        blended = weight * parts[0].stage_s[stage] + (1 - weight) * parts[1].stage_s[stage]
        if stage is Stage.SAFETY:
            assert np.all(mixed.stage_s[stage] <= blended + 1e-15), "max(0, x) is convex"
        else:
            np.testing.assert_allclose(mixed.stage_s[stage], blended, rtol=1e-12, err_msg=stage)
