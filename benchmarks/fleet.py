"""Fleet benchmark: ``python -m benchmarks.fleet [--quick] [--output PATH]``.

Runs, in one process, the fleet engine on codex-spark with contention (1,000
agents, one 31-turn rollout each, staggered over 30 s) next to a bare SimPy
skeleton with the same four pools and the same stage structure per turn, and
reports events per second, turns per second and the ratio engine / skeleton.
Then, in a subprocess, the peak memory of a 10,000-agent run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import simpy

import sim.des
from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import STAGES, Stage
from sim.analytic.agent.engine import expect
from sim.des import engine as des_engine
from sim.des import kernel as des_kernel
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport

OUTPUT = Path(__file__).resolve().parent / "results-fleet.json"
TOOL_CALLS = 30
STAGGER_S = 30.0


def one_rollout_each(agents: int) -> Scenario:
    """codex-spark with ``agents`` agents that each run one rollout of 31 turns."""
    return load_scenario(
        "codex-spark",
        [
            f"load.agents={agents}",
            f"workload.tool_calls_per_rollout={TOOL_CALLS}",
            "load.think_time_s=1e7",
            "load.warmup_s=0",
            f"load.duration_s={STAGGER_S}",
            f"load.start_stagger_s={STAGGER_S}",
        ],
    )


@contextmanager
def counting_events() -> Iterator[list[int]]:
    """Count every event SimPy schedules while the block runs; the engine runs on SimPy's
    queue meanwhile (its own queue schedules the same events), or, compiled
    (``sim.des.compiled``), on its own queue, which counts them."""
    counter = [0]
    original = simpy.Environment.schedule
    queues: list[Any] = []

    class CountedQueue(des_kernel.Environment):
        def __init__(self) -> None:
            super().__init__()
            queues.append(self)

    def schedule(self: simpy.Environment, event: Any, priority: int = 1, delay: float = 0) -> None:
        counter[0] += 1
        original(self, event, priority, delay)

    simpy.Environment.schedule = schedule
    own_queue = des_engine.Environment
    des_engine.Environment = CountedQueue if sim.des.COMPILED else simpy.Environment  # type: ignore[misc,assignment]
    try:
        yield counter
    finally:
        simpy.Environment.schedule = original
        des_engine.Environment = own_queue  # type: ignore[misc]
        counter[0] += sum(queue.scheduled for queue in queues)


def run_engine(scenario: Scenario, transport: Transport) -> int:
    """One fleet replication; returns the turns simulated."""
    return int(simulate_fleet(scenario, transport, 1).records.turns.sum())


def run_skeleton(scenario: Scenario, transport: Transport) -> int:
    """The same pools and stage structure with constant (mean) durations and nothing else."""
    mean_s = _mean_stage_s(scenario, transport)
    c = scenario.capacity
    env = simpy.Environment()
    api = simpy.Resource(env, c.api_workers)
    store = simpy.Resource(env, c.state_store_slots)
    safety = simpy.Resource(env, c.safety_workers)
    inference = simpy.Resource(env, c.inference_slots)
    turns = TOOL_CALLS + 1
    http = transport is Transport.HTTP
    pre_s = sum(mean_s[s] for s in (Stage.CLIENT_BUILD, Stage.CONNECT, Stage.UPLOAD))
    api_s = sum(mean_s[s] for s in (Stage.VALIDATE, Stage.STATE_LOAD, Stage.RENDER, Stage.ROUTE))

    a = scenario.api
    post_s = (
        a.post_fixed_ms + a.post_per_1k_tokens_ms * scenario.workload.output_tokens.mean / 1e3
    ) / 1e3

    def post() -> Iterator[simpy.Event]:
        with api.request() as request:
            yield request
            yield env.timeout(post_s)

    def agent(start_s: float) -> Iterator[simpy.Event]:
        yield env.timeout(start_s)
        for _ in range(turns):
            yield env.timeout(pre_s)
            with api.request() as request:
                yield request
                if http:
                    yield env.timeout(mean_s[Stage.VALIDATE])
                    with store.request() as slot:
                        yield slot
                        yield env.timeout(mean_s[Stage.STATE_LOAD])
                    yield env.timeout(mean_s[Stage.RENDER] + mean_s[Stage.ROUTE])
                else:
                    yield env.timeout(api_s)
            with safety.request() as request:
                yield request
                yield env.timeout(mean_s[Stage.SAFETY])
            with inference.request() as request:
                yield request
                yield env.timeout(mean_s[Stage.PREFILL])
                yield env.timeout(mean_s[Stage.DECODE])
            if http:
                yield from post()
            else:
                env.process(post())
            yield env.timeout(mean_s[Stage.DOWNLOAD] + mean_s[Stage.TOOL])

    starts_s = np.linspace(0.0, STAGGER_S, scenario.load.agents, endpoint=False)
    for start_s in starts_s:
        env.process(agent(float(start_s)))
    env.run()
    return scenario.load.agents * turns


def _mean_stage_s(scenario: Scenario, transport: Transport) -> dict[Stage, float]:
    e = expect(scenario, transport)
    return {stage: float(s) / e.turns for stage, s in zip(STAGES, e.stage_s, strict=True)}


def timed(run: Any, scenario: Scenario, transport: Transport, repeats: int) -> dict[str, float]:
    """Best of ``repeats`` wall times, events counted in a separate run."""
    best_s = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        turns = run(scenario, transport)
        best_s = min(best_s, time.perf_counter() - started)
    with counting_events() as events:
        run(scenario, transport)
    return {
        "turns": turns,
        "events": events[0],
        "seconds": best_s,
        "turns_per_s": turns / best_s,
        "events_per_s": events[0] / best_s,
    }


def peak_memory(agents: int) -> dict[str, float]:
    """Peak traced and resident memory of one fleet run, in a fresh subprocess."""
    code = (
        "import json, resource, tracemalloc\n"
        "from benchmarks.fleet import one_rollout_each, run_engine\n"
        "from sim.turn.transports import Transport\n"
        f"scenario = one_rollout_each({agents})\n"
        "tracemalloc.start()\n"
        "turns = run_engine(scenario, Transport.WS)\n"
        "_, peak = tracemalloc.get_traced_memory()\n"
        "rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'turns': turns, 'peak_traced_bytes': peak,"
        " 'max_rss_bytes': rss_kb * 1024}))\n"
    )
    root = Path(__file__).resolve().parent.parent
    output = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    return json.loads(output.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a smoke check")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    agents, repeats, memory_agents = (
        (100, 1, (1_000,)) if args.quick else (1_000, 3, (1_000, 10_000))
    )
    scenario = one_rollout_each(agents)
    results: dict[str, Any] = {"agents": agents, "turns_per_rollout": TOOL_CALLS + 1}
    for transport in (Transport.HTTP, Transport.WS):
        engine = timed(run_engine, scenario, transport, repeats)
        skeleton = timed(run_skeleton, scenario, transport, repeats)
        results[transport.value] = {
            "engine": engine,
            "skeleton": skeleton,
            "turns_per_s_ratio": engine["turns_per_s"] / skeleton["turns_per_s"],
            "events_per_turn_engine": engine["events"] / engine["turns"],
            "events_per_turn_skeleton": skeleton["events"] / skeleton["turns"],
        }
        print(
            f"{transport.value:5s} engine {engine['turns_per_s']:9.0f} turns/s "
            f"{engine['events_per_s']:9.0f} events/s | skeleton {skeleton['turns_per_s']:9.0f} "
            f"turns/s {skeleton['events_per_s']:9.0f} events/s | ratio "
            f"{results[transport.value]['turns_per_s_ratio']:.2f}"
        )
    results["memory"] = {str(n): peak_memory(n) for n in memory_agents}
    for n, memory in results["memory"].items():
        print(
            f"{n} agents: {memory['turns']} turns, peak traced "
            f"{memory['peak_traced_bytes'] / 2**20:.0f} MiB, max RSS "
            f"{memory['max_rss_bytes'] / 2**20:.0f} MiB"
        )
    args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
