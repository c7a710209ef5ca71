"""The fleet's rate limit: token buckets per organization, 429s with retry-after, the retry
stage, and the DES against Little's law and the analytic fleet."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from support import scenario

from models.loading import ScenarioError
from models.stages import STAGE_COLUMN, Stage
from sim.analysis.estimates import TURNS_PER_REFUSAL
from sim.analysis.fleet_analytic import analytic_points
from sim.analysis.fleet_need import fleet_need
from sim.analysis.fleet_summary import fleet_result
from sim.dashboard.load import rate_limit_notes
from sim.des.rate_limit import RateLimiter
from sim.des.runners import simulate_fleet
from sim.report.chrome_trace import trace_events
from sim.turn.transports import Transport

FLEET = (
    "load.agents=40",
    "load.warmup_s=120",
    "load.duration_s=300",
    "load.think_time_s={kind='constant', value=5.0}",
)
LIMIT_RPM = 900.0
"""Under the 3,900 requests a minute the 40 agents send unlimited (over WebSocket)."""
WHOLE_SECONDS = "rate_limit.retry_after_resolution_s=1"


def fleet(*overrides: str, transport: Transport = Transport.WS):
    s = scenario("codex-spark-fleet", *FLEET, *overrides)
    return s, simulate_fleet(s, transport, 0, trace_rollouts=20)


class _Clock:
    now = 0.0


def _limiter(*overrides: str) -> RateLimiter:
    s = scenario("codex-spark", *overrides)
    return RateLimiter(s, _Clock(), (0.0, np.inf), np.random.default_rng(0))


def test_a_bucket_admits_its_burst_then_tells_the_wait_until_the_next_request() -> None:
    """60 a minute, 2 s of burst: two at once, then one a second; retry-after is the wait
    to the next unit, rounded up to the resolution."""
    limiter = _limiter("rate_limit.requests_per_minute=60", "rate_limit.burst_s=2")
    assert [limiter.retry_after_s(0, 0.0) for _ in range(2)] == [0.0, 0.0]
    _Clock.now = 0.25
    assert limiter.retry_after_s(0, 0.0) == pytest.approx(0.75)
    _Clock.now = 1.0
    assert limiter.retry_after_s(0, 0.0) == 0.0
    assert limiter.refused == 1 and limiter.admitted == 3
    whole = _limiter("rate_limit.requests_per_minute=60", WHOLE_SECONDS)
    _Clock.now = 0.0
    whole.retry_after_s(0, 0.0)
    _Clock.now = 0.1
    assert whole.retry_after_s(0, 0.0) == 1.0


def test_an_idle_bucket_admits_exactly_its_burst_then_its_rate() -> None:
    """120 a minute with 5 s of burst: after an hour idle, 10 at once (not an hour's
    refill), then, asked every 10 ms, 2 a second for the next minute."""
    clock = SimpleNamespace(now=3600.0)
    s = scenario("codex-spark", "rate_limit.requests_per_minute=120", "rate_limit.burst_s=5")
    limiter = RateLimiter(s, clock, (0.0, np.inf), np.random.default_rng(0))
    at_once = [limiter.retry_after_s(0, 0.0) for _ in range(50)]
    assert at_once.count(0.0) == 10
    admitted_before = limiter.admitted
    for step in range(1, 6001):
        clock.now = 3600.0 + step * 0.01
        limiter.retry_after_s(0, 0.0)
    assert limiter.admitted - admitted_before == 120


def test_a_token_limit_charges_the_whole_request_and_a_large_one_goes_into_debt() -> None:
    """6,000 tokens a minute (100/s, a 1 s bucket): a 500-token request is admitted from
    a full bucket, leaving it 400 short, so the next waits (400 + 1) / 100 = 4.01 s until
    the bucket holds a token again; the other organization's bucket is untouched."""
    limiter = _limiter("rate_limit.tokens_per_minute=6000", "rate_limit.organizations=2")
    _Clock.now = 0.0
    assert limiter.retry_after_s(0, 500.0) == 0.0
    assert limiter.retry_after_s(0, 10.0) == pytest.approx(4.01)
    assert limiter.retry_after_s(1, 10.0) == 0.0


@pytest.mark.slow
def test_a_limit_above_the_load_changes_nothing_bit_for_bit() -> None:
    _, free = fleet()
    _, limited = fleet("rate_limit.requests_per_minute=100000", "rate_limit.tokens_per_minute=1e10")
    assert limited.requests_refused == 0 and limited.requests_admitted > 0
    assert np.array_equal(free.records.e2e_s, limited.records.e2e_s)
    assert np.array_equal(free.records.stage_s, limited.records.stage_s)
    assert free.turns_completed == limited.turns_completed


@pytest.mark.slow
@pytest.mark.parametrize("organizations", [1, 2])
def test_above_the_limit_the_admitted_rate_is_the_limit_of_each_organization(
    organizations: int,
) -> None:
    per_organization = LIMIT_RPM / organizations
    s, r = fleet(
        f"rate_limit.requests_per_minute={per_organization}",
        f"rate_limit.organizations={organizations}",
    )
    admitted_per_min = r.requests_admitted / r.window_s * 60.0
    assert admitted_per_min == pytest.approx(LIMIT_RPM, rel=0.01)
    assert r.turns_completed / r.window_s * 60.0 == pytest.approx(LIMIT_RPM, rel=0.01)
    result = fleet_result("t", s, Transport.WS, [r, r])
    assert result.fleet.rate_limit.admitted_requests_per_min.mean == pytest.approx(
        per_organization, rel=0.01
    )
    assert r.records.count == r.rollouts_started, "a measured rollout never finished"


@pytest.mark.slow
def test_a_token_limit_admits_its_tokens_per_minute() -> None:
    tpm = 20e6
    s, r = fleet(f"rate_limit.tokens_per_minute={tpm}")
    records = r.records
    prompt = records.cached_prompt_tokens.sum() + records.uncached_prompt_tokens.sum()
    tokens_per_request = prompt / records.turns.sum() + s.workload.output_tokens.mean
    admitted_tokens = r.requests_admitted / r.window_s * 60.0 * tokens_per_request
    assert admitted_tokens == pytest.approx(tpm, rel=0.03)


def test_attempts_per_request_follow_littles_law_and_the_retry_after() -> None:
    """N agents cycling at the limit X: each request spends N / X less its unlimited cycle
    Z refused (Little), in attempts a round trip, a whole second and half the spread
    apart, so 429s per request = (N/X - Z) / (1 + rtt + spread/2)."""
    s, free = fleet()
    z_s = (free.records.e2e_s.mean() + 5.0) / free.records.turns.mean()
    _, r = fleet(f"rate_limit.requests_per_minute={LIMIT_RPM}", WHOLE_SECONDS)
    wait_s = 40 / (LIMIT_RPM / 60.0) - z_s
    measured_wait_s = r.records.rate_limit_wait_s.sum() / r.records.turns.sum()
    assert measured_wait_s == pytest.approx(wait_s, rel=0.03)
    attempt_s = 1.0 + s.network.rtt_ms * 1e-3 + s.rate_limit.retry_spread_ms * 1e-3 / 2
    refused = r.requests_refused / r.requests_admitted
    assert refused == pytest.approx(wait_s / attempt_s, rel=0.03)


@pytest.mark.slow
def test_refusals_are_the_retry_stage_of_the_budget_and_the_trace() -> None:
    _, r = fleet(f"rate_limit.requests_per_minute={LIMIT_RPM}")
    records, turns = r.records, r.records.turn_records
    retry = records.stage_s[:, STAGE_COLUMN[Stage.RETRY]]
    assert np.allclose(retry, records.rate_limit_wait_s)  # no server errors
    assert np.allclose(records.stage_s.sum(axis=1), records.e2e_s, rtol=0, atol=1e-9)
    assert turns.rate_limited.sum() > 0
    assert np.all(turns.stage_s[turns.rate_limited == 0, STAGE_COLUMN[Stage.RETRY]] == 0)
    assert np.all(turns.stage_s[turns.rate_limited > 0, STAGE_COLUMN[Stage.RETRY]] > 0)
    assert np.all(turns.ttft_s >= turns.stage_s[:, STAGE_COLUMN[Stage.RETRY]])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overrides", "tolerance"),
    [
        ((f"rate_limit.requests_per_minute={LIMIT_RPM}", WHOLE_SECONDS), 0.03),
        ((f"rate_limit.requests_per_minute={LIMIT_RPM}",), 0.03),
        ((f"rate_limit.requests_per_minute={LIMIT_RPM / 2}", "rate_limit.organizations=2"), 0.03),
        (("rate_limit.tokens_per_minute=2e7",), 0.10),
    ],
)
def test_the_analytic_fleet_caps_its_throughput_and_agrees_with_the_des(
    overrides: tuple[str, ...], tolerance: float
) -> None:
    """The tolerance on 429s per request reflects the analytic herd model (docs/load.md)."""
    s, r = fleet(*overrides)
    des = fleet_result("t", s, Transport.WS, [r, r])
    analytic = analytic_points("t", [s], Transport.WS)[0]
    assert analytic.e2e_s.mean == pytest.approx(des.e2e_s.mean, rel=0.02)
    a, d = analytic.fleet.rate_limit, des.fleet.rate_limit
    assert a.admitted_requests_per_min.mean == pytest.approx(
        d.admitted_requests_per_min.mean, rel=0.01
    )
    assert a.refused_s_per_turn == pytest.approx(d.refused_s_per_turn, rel=0.03)
    assert a.refused_per_request == pytest.approx(d.refused_per_request, rel=tolerance)
    assert analytic.budget_s[Stage.RETRY] == pytest.approx(des.budget_s[Stage.RETRY], rel=0.03)


def test_the_analytic_fleet_under_the_limit_is_the_unlimited_one() -> None:
    s = scenario("codex-spark-fleet", *FLEET, "rate_limit.requests_per_minute=100000")
    limited = analytic_points("t", [s], Transport.WS)[0]
    free = analytic_points("t", [scenario("codex-spark-fleet", *FLEET)], Transport.WS)[0]
    assert limited.e2e_s.mean == free.e2e_s.mean
    assert limited.fleet.rate_limit.refused_per_request == 0.0


@pytest.mark.slow
def test_open_arrivals_above_the_limit_are_unstable_in_both_engines() -> None:
    overrides = (
        "load.kind='open'",
        "load.rollouts_per_s=1.0",
        "load.duration_s=200",
        f"rate_limit.requests_per_minute={LIMIT_RPM}",
    )
    s = scenario("codex-spark-fleet", *overrides)
    analytic = analytic_points("t", [s], Transport.WS)[0]
    assert not analytic.stable and "rate limit" in analytic.fleet.unstable_reason
    des = fleet_result("t", s, Transport.WS, [simulate_fleet(s, Transport.WS, 0)] * 2)
    assert not des.stable and "requests_per_minute" in des.fleet.unstable_reason


def test_a_resolution_under_a_millisecond_is_refused() -> None:
    with pytest.raises(ScenarioError, match="retry_after_resolution_s"):
        scenario("codex-spark", "rate_limit.retry_after_resolution_s=0")


@pytest.mark.slow
def test_the_dashboards_load_view_says_what_the_limit_admits_and_the_429s() -> None:
    s, r = fleet(f"rate_limit.requests_per_minute={LIMIT_RPM}")
    assert rate_limit_notes(scenario("codex-spark-fleet"), (Transport.WS,), []) == []
    point = fleet_result("t", s, Transport.WS, [r, r])
    cap_note, point_note = rate_limit_notes(s, (Transport.WS,), [point])
    turns = analytic_points("t", [s], Transport.WS)[0].turns_per_rollout
    assert f"admits {LIMIT_RPM / 60 / turns:.3g} rollouts/s" in cap_note
    assert f"{point.fleet.rate_limit.refused_per_request:.2f} 429s per request" in point_note


@pytest.mark.slow
def test_the_trace_marks_each_turns_429s_on_its_retry_span() -> None:
    _, r = fleet(f"rate_limit.requests_per_minute={LIMIT_RPM}")
    turns = r.records.turn_records
    retry = [e for e in trace_events(turns, "t") if e.get("name") == Stage.RETRY.value]
    assert retry and all(e["args"]["rate_limited"] > 0 for e in retry)
    assert len(retry) == int(np.count_nonzero(turns.rate_limited))
    assert sum(e["dur"] for e in retry) == pytest.approx(
        turns.stage_s[:, STAGE_COLUMN[Stage.RETRY]].sum() * 1e6
    )


@pytest.mark.slow
def test_a_runs_estimate_counts_the_429s_the_herd_will_send() -> None:
    """The refusals a run's cost estimate expects per simulated second are those the DES
    sends (the agents beyond what the cap keeps cycling, once per attempt interval)."""
    s, r = fleet(f"rate_limit.requests_per_minute={LIMIT_RPM}")
    need = fleet_need("t", s, Transport.WS)
    free = fleet_need("t", scenario("codex-spark-fleet", *FLEET), Transport.WS)
    load = s.load
    expected_per_s = (need.turns - free.turns) / TURNS_PER_REFUSAL
    expected_per_s /= load.replications * (load.warmup_s + load.duration_s)
    assert r.requests_refused / r.window_s == pytest.approx(expected_per_s, rel=0.1)
    assert "refused attempts under the rate limit" in need.turns_basis
