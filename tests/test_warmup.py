"""Steady state: MSER-5 finds a known transient in a synthetic series, cuts nothing from
a stationary one, says when a series never settles; and cutting a replication at a
checkpoint gives what a run measured from there would have given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.loading import load_scenario
from models.stages import POOLS
from sim.analysis.warmup import mser5, steady_state
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport

TINY = str(Path(__file__).parent / "data" / "tiny-fleet.toml")


def noise(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 1.0, n)


@pytest.mark.parametrize("seed", range(5))
def test_mser5_cuts_a_known_transient(seed: int) -> None:
    """2,000 observations, unit noise around 10, starting 8 above it and decaying with a
    time constant of 60: the transient is below a tenth of the noise after about 260
    observations.  MSER-5 cuts between 100 and 500 and calls the series settled."""
    n = np.arange(2000)
    series = 10.0 + 8.0 * np.exp(-n / 60.0) + noise(n.size, seed)
    truncation = mser5(series)
    assert 100 <= truncation.deleted <= 500
    assert truncation.deleted % 5 == 0
    assert truncation.settled


@pytest.mark.parametrize("seed", range(5))
def test_mser5_keeps_a_stationary_series_almost_whole(seed: int) -> None:
    truncation = mser5(10.0 + noise(2000, seed))
    assert truncation.deleted < 200 and truncation.settled


def test_mser5_says_a_series_that_never_settles_is_too_short() -> None:
    """A trend through the whole series: the best cut is at the end of the search."""
    series = np.linspace(0.0, 20.0, 1000) + noise(1000, 1)
    assert not mser5(series).settled


def test_mser5_does_not_judge_a_series_of_fewer_than_ten_batches() -> None:
    assert mser5(np.arange(40.0)).deleted == 0


def test_a_replication_cut_at_a_checkpoint_is_the_run_measured_from_there() -> None:
    """The tiny fleet measured over [20, 140) s and cut at 80 s against the same run
    measured over [80, 140): the same rollouts, the same time-weighted levels (to 1e-9)
    and, within a few, the same completed turns (a turn is counted when its download
    starts, and one straddling 80 s counts on one side only)."""
    s = load_scenario(TINY, ["load.agents=6"])
    whole = simulate_fleet(s, Transport.HTTP, 1)
    cut = whole.since(80.0)
    late = simulate_fleet(
        load_scenario(TINY, ["load.agents=6", "load.warmup_s=80", "load.duration_s=60"]),
        Transport.HTTP,
        1,
    )
    assert cut.window_start_s == 80.0 and cut.window_s == pytest.approx(60.0)
    np.testing.assert_array_equal(np.sort(cut.records.e2e_s), np.sort(late.records.e2e_s))
    np.testing.assert_array_equal(
        np.sort(cut.records.turn_ttft_s), np.sort(late.records.turn_ttft_s)
    )
    for pool in POOLS:
        assert cut.pools[pool].utilization == pytest.approx(late.pools[pool].utilization, rel=1e-9)
        assert cut.pools[pool].mean_waiting == pytest.approx(
            late.pools[pool].mean_waiting, abs=1e-9
        )
    assert cut.mean_in_system == pytest.approx(late.mean_in_system, rel=1e-9)
    assert cut.rollouts_started == late.rollouts_started
    assert abs(cut.turns_completed - late.turns_completed) <= 3
    assert whole.since(0.0) is whole


def test_steady_state_cuts_each_replication_at_or_after_the_configured_warm_up() -> None:
    s = load_scenario(TINY, ["load.agents=6", "load.warmup_s=0"])
    runs = [simulate_fleet(s, Transport.WS, r) for r in range(2)]
    steady = steady_state(runs)
    assert steady.cut_s >= 0.0
    for before, after in zip(runs, steady.replications, strict=True):
        assert after.window_start_s >= before.window_start_s
        assert np.all(after.records.started_at_s >= after.window_start_s)
        assert after.records.count <= before.records.count
