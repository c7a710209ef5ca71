"""Saturation: open load past a pool's capacity makes the backlog grow without bound,
and the summary says the system is unstable instead of reporting means.

codex-spark over HTTP with one safety worker: a rollout holds that worker for all
its classifier work, blocking and parallel (about 5.6 s over its ~31 turns), so the
pool completes at most 1 / 5.6 ~ 0.18 rollouts/s while 0.5 arrive per second.  Two window lengths
(200 s and 400 s, no warm-up, 2 replications) of about 100 and 200 arrivals each.
"""

from __future__ import annotations

from functools import cache

import pytest

from models.loading import load_scenario
from models.scenario import Scenario
from sim.analysis.fleet_summary import fleet_result, offered_load, run_fleet
from sim.analytic.agent.engine import expect
from sim.des.replication import Replication
from sim.turn.transports import Transport

OVERLOAD = (
    "load.kind='open'",
    "load.warmup_s=0",
    "load.replications=2",
    "capacity.safety_workers=1",
)


@cache
def overloaded(rate: float, duration_s: float) -> tuple[Scenario, list[Replication]]:
    s = load_scenario(
        "codex-spark", (*OVERLOAD, f"load.rollouts_per_s={rate}", f"load.duration_s={duration_s}")
    )
    return s, run_fleet(s, Transport.HTTP)


def net_inflow_per_s(s: Scenario) -> float:
    """Arrival rate minus the most rollouts per second the safety pool can complete."""
    safety_s = expect(s, Transport.HTTP).safety_cpu_s
    return s.load.rollouts_per_s - s.capacity.safety_workers / safety_s


@pytest.mark.slow
def test_the_backlog_grows_with_the_window_past_capacity() -> None:
    """Rollouts in system at the window's end are at least 80% of the net inflow x T
    (a fluid bound: completions cannot outpace the safety pool), and both that count and
    the time-average double, within noise, when the window doubles; the safety worker is
    busy all the time but the first seconds, before the first rollouts reach it."""
    short_s, shorts = overloaded(0.5, 200.0)
    long_s, longs = overloaded(0.5, 400.0)
    inflow = net_inflow_per_s(short_s)
    assert inflow > 0.25
    for s, runs in ((short_s, shorts), (long_s, longs)):
        for run in runs:
            assert run.in_system_at_end >= 0.8 * inflow * s.load.duration_s
            assert run.mean_in_system >= 0.8 * inflow * s.load.duration_s / 2
    for short, long in zip(shorts, longs, strict=True):
        assert long.in_system_at_end >= 1.5 * short.in_system_at_end
        assert long.mean_in_system >= 1.5 * short.mean_in_system
        assert long.pools["safety"].utilization > 0.95, "idle only while the first arrive"


def test_the_summary_reports_an_unstable_point_without_means() -> None:
    """``fleet_result`` sets stable = False, names the safety pool and its offered
    load lambda x E[classifier work] / workers in the reason, and reports no latency
    means."""
    s, runs = overloaded(0.5, 200.0)
    summary = fleet_result("codex-spark:http", s, Transport.HTTP, runs).to_json()
    offered = offered_load(s, Transport.HTTP)
    safety_s = expect(s, Transport.HTTP).safety_cpu_s
    assert offered["safety"] == pytest.approx(s.load.rollouts_per_s * safety_s)
    assert not summary["stable"]
    assert "safety pool" in summary["unstable_reason"]
    assert f"{offered['safety']:.2f}x" in summary["unstable_reason"]
    assert summary["e2e_s"] is None and summary["ttft_s"] is None
    assert "utilization" not in summary


def test_the_same_pools_are_stable_below_capacity() -> None:
    """At a rate whose offered load is below 1 on every pool the summary is stable and
    reports latency means."""
    s, runs = overloaded(0.1, 200.0)
    assert max(offered_load(s, Transport.HTTP).values()) < 1
    summary = fleet_result("codex-spark:http", s, Transport.HTTP, runs).to_json()
    assert summary["stable"]
    assert summary["unstable_reason"] is None
    assert summary["e2e_s"]["mean"] > 0 and summary["ttft_s"]["p95"] > 0
