"""Invariants of fleet runs: the budget adds up under contention, nothing is negative,
batching only slows decode, and runs replay exactly from their seed.

Runs use ``tests/data/tiny-fleet.toml`` (five-turn codex-spark rollouts, pools of one
or two workers, 120 s windows), so each costs a fraction of a second.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import POOLS, STAGE_COLUMN, Stage
from sim.des.draws import draw_turns
from sim.des.replication import Replication
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport

TINY = str(Path(__file__).parent / "data" / "tiny-fleet.toml")
QUEUE = STAGE_COLUMN[Stage.QUEUE]
DECODE = STAGE_COLUMN[Stage.DECODE]


@cache
def tiny(*overrides: str) -> Scenario:
    return load_scenario(TINY, overrides)


def assert_fleet_invariants(s: Scenario, run: Replication) -> None:
    """Stages add up to e2e, durations are non-negative, pool statistics are consistent."""
    r = run.records
    clock_s = 4 * np.spacing(s.load.warmup_s + 2 * s.load.duration_s + 600.0)
    np.testing.assert_allclose(r.stage_s.sum(axis=1), r.e2e_s, rtol=1e-9, atol=clock_s)
    assert np.all(r.stage_s >= 0)
    assert np.all(r.turn_ttft_s > 0)
    assert np.all(r.api_cpu_s >= 0) and np.all(r.safety_cpu_s >= 0)
    np.testing.assert_allclose(r.turn_ttft_s.sum(), r.ttft_sum_s.sum(), rtol=1e-9)
    queued_s = sum(run.wait_s_by_pool.values())
    np.testing.assert_allclose(queued_s, r.stage_s[:, QUEUE].sum(), rtol=1e-9, atol=1e-12)
    assert all(run.wait_s_by_pool[pool] >= 0 for pool in POOLS)
    for pool in POOLS:
        stats = run.pools[pool]
        assert 0 <= stats.utilization <= 1
        assert stats.mean_busy <= stats.capacity
        assert stats.mean_waiting >= 0
    assert r.count <= run.rollouts_started
    assert run.in_system_at_end >= 0 and run.mean_in_system >= 0


@settings(max_examples=15, derandomize=True, deadline=None)
@given(
    transport=st.sampled_from(list(Transport)),
    kind=st.sampled_from(["closed", "open"]),
    agents=st.integers(1, 8),
    rate=st.floats(0.05, 1.0),
    api=st.integers(1, 3),
    safety=st.integers(1, 3),
    store=st.integers(1, 3),
    replicas=st.integers(1, 3),
    streams=st.integers(1, 4),
    slowdown=st.floats(0.0, 1.0),
    drops=st.floats(0.0, 600.0),
)
def test_stages_add_up_and_nothing_is_negative_under_any_contention(
    transport: Transport,
    kind: str,
    agents: int,
    rate: float,
    api: int,
    safety: int,
    store: int,
    replicas: int,
    streams: int,
    slowdown: float,
    drops: float,
) -> None:
    """Over random loads and capacities (including overloaded ones), each measured
    rollout's stages sum to its e2e (rel 1e-9, plus a few ulps of the clock), no stage
    is negative, per-pool waits sum to the queue stage, and utilizations lie in [0, 1]."""
    s = tiny(
        f"load.kind='{kind}'",
        f"load.agents={agents}",
        f"load.rollouts_per_s={rate}",
        "load.duration_s=60",
        f"capacity.api_workers={api}",
        f"capacity.safety_workers={safety}",
        f"capacity.state_store_slots={store}",
        f"capacity.inference_replicas={replicas}",
        f"capacity.streams_per_replica={streams}",
        f"capacity.decode_slowdown_per_stream={slowdown}",
        f"connection.ws_drops_per_hour={drops}",
    )
    assert_fleet_invariants(s, simulate_fleet(s, transport, 1))


BATCHED = ("load.kind='open'", "load.rollouts_per_s=1.0", "capacity.streams_per_replica=8")
"""One replica with 8 streams under about 0.9 streams of inference work: batches form."""


def test_batching_slows_decode_within_the_batching_curve() -> None:
    """Open arrivals do not depend on service, so the run with slowdown 0.25 measures
    the same rollouts, in the same order, as the run with slowdown 0 (lone-stream
    decode).  Row by row, batched decode >= lone decode and <= lone x (1 + 0.25 x 7),
    the largest batch; on average it is strictly slower, and queueing makes no
    stage other than queue and decode differ."""
    lone_s = tiny(*BATCHED, "capacity.decode_slowdown_per_stream=0")
    batched_s = tiny(*BATCHED, "capacity.decode_slowdown_per_stream=0.25")
    lone = simulate_fleet(lone_s, Transport.HTTP, 0).records
    batched = simulate_fleet(batched_s, Transport.HTTP, 0).records
    assert_fleet_invariants(batched_s, simulate_fleet(batched_s, Transport.HTTP, 0))
    assert lone.count == batched.count > 50
    np.testing.assert_array_equal(lone.turns, batched.turns)
    slowest = 1 + 0.25 * (batched_s.capacity.streams_per_replica - 1)
    lone_decode, batched_decode = lone.stage_s[:, DECODE], batched.stage_s[:, DECODE]
    assert np.all(batched_decode >= lone_decode * (1 - 1e-12))
    assert np.all(batched_decode <= lone_decode * slowest * (1 + 1e-12))
    assert batched_decode.mean() > 1.05 * lone_decode.mean()
    same = np.delete(np.arange(lone.stage_s.shape[1]), [QUEUE, DECODE])
    np.testing.assert_allclose(batched.stage_s[:, same], lone.stage_s[:, same], rtol=1e-9)


def replication_fields(run: Replication) -> dict[str, object]:
    records = {
        name: getattr(run.records, name)
        for name in run.records.__dataclass_fields__
        if name != "turn_records"
    }
    rest = {
        name: getattr(run, name)
        for name in run.__dataclass_fields__
        if name not in ("records", "checkpoints")
    }
    c = run.checkpoints
    levels = {
        f"{kind} {pool}": getattr(c, kind)[pool]
        for kind in ("busy_s", "waiting_s")
        for pool in POOLS
    }
    counts = {
        name: getattr(c, name)
        for name in c.__dataclass_fields__
        if name not in ("busy_s", "waiting_s")
    }
    return {**records, **rest, **levels, **counts}


def test_same_seed_same_replication_replays_exactly() -> None:
    """Two runs of one scenario, transport and replication agree in every record array
    and every statistic, bit for bit."""
    s = tiny("load.agents=6")
    first = replication_fields(simulate_fleet(s, Transport.WS, 1))
    again = replication_fields(simulate_fleet(s, Transport.WS, 1))
    assert first.keys() == again.keys()
    for name, value in first.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, again[name], err_msg=name)
        else:
            assert value == again[name], name


def test_another_replication_or_seed_draws_another_workload() -> None:
    """Replications and seeds key independent streams: the drawn output tokens and the
    simulated end-to-end times differ, while a replication's draws are its own."""
    s = tiny("load.agents=6")
    output = [draw_turns(s, 0, 64, replication).output_tokens for replication in (0, 1, 2)]
    assert not np.array_equal(output[0], output[1])
    assert not np.array_equal(output[1], output[2])
    np.testing.assert_array_equal(output[1], draw_turns(s, 0, 64, 1).output_tokens)
    reseeded = tiny("load.agents=6", f"seed={s.seed + 1}")
    assert not np.array_equal(output[1], draw_turns(reseeded, 0, 64, 1).output_tokens)
    one, two = (simulate_fleet(s, Transport.HTTP, r).records for r in (1, 2))
    assert one.e2e_s.size > 0 and two.e2e_s.size > 0
    assert not np.array_equal(np.sort(one.e2e_s), np.sort(two.e2e_s))
