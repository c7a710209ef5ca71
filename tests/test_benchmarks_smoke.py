"""Smoke test of the benchmark harness at tiny sizes: structure only, never timing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.skeleton import run_skeleton
from benchmarks.speed import (
    coalesced_means_s,
    des_workload,
    measure,
    skeleton_workload,
    stage_means_s,
)
from models.loading import load_scenario
from models.stages import STAGES
from sim.des.runners import simulate
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.transports import Transport

ROLLOUTS = 3


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("codex-spark")


@pytest.fixture(scope="module")
def rollout_turns(scenario) -> list[int]:
    return simulate(scenario, Transport.WS, ROLLOUTS).turns.astype(int).tolist()


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_des_measurement_counts_the_requested_rollouts_turns(scenario, rollout_turns, transport):
    [speed] = measure([des_workload(scenario, transport, ROLLOUTS)], repeats=1)
    assert speed.rollouts == ROLLOUTS
    assert speed.turns == sum(rollout_turns)
    # one request per turn, at most one tool step per turn, plus a process start and end
    assert speed.turns + 2 <= speed.events <= 2 * speed.turns + 2
    assert speed.best_s > 0


def test_per_stage_skeleton_processes_one_event_per_stage_per_turn(scenario, rollout_turns):
    stage_s = stage_means_s(scenario, Transport.WS)
    [speed] = measure([skeleton_workload("per stage", rollout_turns, stage_s)], repeats=1)
    processes = math.ceil(ROLLOUTS / BLOCK_ROLLOUTS)
    assert speed.turns == sum(rollout_turns)
    assert speed.events == len(STAGES) * speed.turns + 2 * processes


def test_per_stage_skeleton_counts_across_blocks(scenario):
    rollout_turns = [1] * (BLOCK_ROLLOUTS + 1)
    stage_s = stage_means_s(scenario, Transport.WS)
    [speed] = measure([skeleton_workload("per stage", rollout_turns, stage_s)], repeats=1)
    assert speed.rollouts == BLOCK_ROLLOUTS + 1
    assert speed.events == len(STAGES) * (BLOCK_ROLLOUTS + 1) + 2 * 2


def test_coalesced_skeleton_keeps_the_turn_duration(scenario, rollout_turns):
    stage_s = stage_means_s(scenario, Transport.WS)
    coalesced_s = coalesced_means_s(stage_s)
    assert coalesced_s.shape == (2,)
    assert np.isclose(coalesced_s.sum(), stage_s.sum())
    [speed] = measure([skeleton_workload("coalesced", rollout_turns, coalesced_s)], repeats=1)
    assert speed.events == 2 * speed.turns + 2 * math.ceil(ROLLOUTS / BLOCK_ROLLOUTS)


def test_skeleton_simulates_every_turn(scenario, rollout_turns):
    stage_s = stage_means_s(scenario, Transport.WS)
    simulated_s = run_skeleton(rollout_turns, stage_s)
    assert simulated_s == pytest.approx(sum(rollout_turns) * stage_s.sum())


def test_capacity_benchmark_reports_its_answers_and_times() -> None:
    """The capacity harness on the tiny fleet, one transport: structure only."""
    from benchmarks.capacity import TINY, timed_search

    run = timed_search(TINY, [], (Transport.HTTP,))
    assert run["transports"] == ["http"] and run["workers"] >= 1
    assert run["wall_s"] > 0 and run["cpu_s"] > 0
    answer = run["answers"]["http"]
    assert answer["capacity_agents"] >= 1
    assert answer["probes"] >= 2 and answer["replications"] >= 2 * answer["probes"]


def test_fleet_speed_is_measured_against_the_same_engine_on_simpy() -> None:
    """The fleet figure and its baseline in the same run: structure only; the engine's queue
    is its own again afterwards."""
    from benchmarks.fleet_waits import fleet
    from sim.des import engine, kernel

    found = fleet((4,), 1)
    assert found["turns_per_cpu_s"].keys() == found["on_simpy_turns_per_cpu_s"].keys() == {"4"}
    assert all(math.isfinite(r) and r > 0 for r in found["over_simpy"].values())
    assert engine.Environment is kernel.Environment
