"""The engine's event queue (``sim.des.kernel``) against SimPy: the same runs, bit for bit.

Each case runs one fleet replication (or one agent's block) twice, once on the
engine's own queue and once on ``simpy.Environment``, and compares every record
array, every statistic and every checkpoint exactly: the queue must process the
same events at the same times in the same order.  Where the engine's event loop is
compiled (``sim.des.compiled``), the run on SimPy is the ``.py`` modules' in a child
process (``tests/pure_engine.py``): the compiled modules take only their own
queue.  The cases cover queues at every pool (the tiny fleet), both transports,
open arrivals, sessions, KV residency with per-replica queues, the rate limit with
its retries, compaction and server errors.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pure_engine
import pytest
import simpy
from test_fleet_invariants import replication_fields

import sim.des
from models.loading import load_scenario
from models.scenario import Scenario
from sim.des import engine, kernel
from sim.des.replication import Replication
from sim.des.runners import simulate, simulate_fleet
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

TINY = str(Path(__file__).parent / "data" / "tiny-fleet.toml")

CASES = {
    "queues everywhere": (TINY, "load.agents=8"),
    "open arrivals": (TINY, 'load.kind="open"', "load.rollouts_per_s=1.5"),
    "sessions": (TINY, "load.agents=6", "connection.reuse_across_rollouts=true"),
    "residency": (
        TINY,
        "load.agents=8",
        "kv_cache.residency=true",
        "capacity.inference_replicas=3",
        "capacity.streams_per_replica=2",
    ),
    "rate limit": (
        TINY,
        "load.agents=8",
        "rate_limit.requests_per_minute=120",
        "rate_limit.tokens_per_minute=2e6",
        "rate_limit.organizations=2",
    ),
    "errors and compaction": (
        TINY,
        "load.agents=6",
        "retries.server_error_prob=0.05",
        "workload.tool_calls_per_rollout=8",
        "compaction.summary_tokens=1000",
        "compaction.threshold_tokens=13000",
        "connection.ws_drops_per_hour=60",
    ),
}


@cache
def case(name: str) -> Scenario:
    source, *overrides = CASES[name]
    return load_scenario(source, ["load.duration_s=60", "load.warmup_s=10", *overrides])


def one_agent_scenario() -> Scenario:
    return load_scenario("codex-spark", ["connection.reuse_across_rollouts=true"])


def on_simpy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "Environment", simpy.Environment)


def assert_same(a: dict[str, object], b: dict[str, object]) -> None:
    assert a.keys() == b.keys()
    for name, value in a.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, b[name], err_msg=name)
        else:
            assert value == b[name], name


def assert_same_replication(ours: Replication, theirs: Replication) -> None:
    """Every statistic, checkpoint and record of two replications alike, turns included."""
    assert_same(replication_fields(ours), replication_fields(theirs))
    turns, reference = ours.records.turn_records, theirs.records.turn_records
    assert turns is not None and reference is not None
    for field in turns.__dataclass_fields__:
        np.testing.assert_array_equal(getattr(turns, field), getattr(reference, field), field)


def assert_same_rollouts(ours: RolloutRecords, theirs: RolloutRecords) -> None:
    """Every per-rollout record of two runs alike."""
    for field in ours.__dataclass_fields__:
        if field != "turn_records":
            np.testing.assert_array_equal(getattr(ours, field), getattr(theirs, field), field)


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fleet_replication_is_simpys_bit_for_bit(
    name: str, transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = case(name)
    ours = simulate_fleet(s, transport, 1, trace_rollouts=3)
    assert ours.records.count > 0
    if sim.des.COMPILED:
        theirs = pure_engine.fleet(name, transport, on_simpy=True)
    else:
        with monkeypatch.context() as patched:
            on_simpy(patched)
            theirs = simulate_fleet(s, transport, 1, trace_rollouts=3)
    assert_same_replication(ours, theirs)


def test_one_agent_on_the_queue_is_simpys_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    s = one_agent_scenario()
    ours = simulate(s, Transport.HTTP, 300, reference=True)
    if sim.des.COMPILED:
        theirs = pure_engine.one_agent(on_simpy=True)
    else:
        with monkeypatch.context() as patched:
            on_simpy(patched)
            theirs = simulate(s, Transport.HTTP, 300, reference=True)
    assert_same_rollouts(ours, theirs)


@pytest.mark.parametrize("make", [kernel.Environment, simpy.Environment])
def test_the_queue_keeps_simpys_order_of_ties(make: type) -> None:
    """Events at one time run in the order they were scheduled, a process's start before
    them, and a process that returns triggers its own event (what waits on it resumes);
    SimPy does the same."""
    env = make()
    seen: list[str] = []

    def child() -> object:
        yield env.timeout(1.0)
        seen.append("child")
        return "done"

    def parent() -> object:
        seen.append("parent starts")
        value = yield env.process(child())
        seen.append(f"parent resumes with {value} at {env.now}")

    env.timeout(0.0).callbacks.append(lambda _e: seen.append("zero timeout"))
    env.timeout(1.0).callbacks.append(lambda _e: seen.append("first timeout"))
    env.process(parent())
    trigger = env.event()
    env.timeout(2.0).callbacks.append(lambda _e: trigger.succeed("late"))
    trigger.callbacks.append(lambda e: seen.append(f"trigger {e.value}"))
    assert env.run(until=trigger) == "late"
    assert seen == [
        "parent starts",
        "zero timeout",
        "first timeout",
        "child",
        "parent resumes with done at 1.0",
        "trigger late",
    ]
    with pytest.raises(ValueError, match="Negative delay"):
        env.timeout(-1.0)
    with pytest.raises(RuntimeError, match="already been triggered"):
        trigger.succeed()
