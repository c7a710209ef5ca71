"""Before and after in one run: ``python -m benchmarks.before_after [--before REF]
[--rounds N] [--capacity] [--output PATH]``.

The fleet engine of git ``REF`` (default ``main``), exported to a temporary directory,
against this working tree, each figure measured in a fresh subprocess of each, the two
interleaved round by round so that a burst of load elsewhere hits both alike; the best
round of each is kept and the ratio after / before reported:

1. the fleet DES over WebSocket at 1,600 agents (``benchmarks.fleet``'s load: one
   31-turn rollout each, staggered over 30 s), turns per CPU-second, and its events per
   turn (counted on SimPy's queue, untimed);
2. one replication of the README's capacity example over WebSocket at 1,469 agents
   (its answer; 60 s of warm-up, the 120 s window and the tail), CPU seconds;
3. with ``--capacity``, the README's capacity example itself as the command runs it
   (both transports, one worker process per core), once each: wall and CPU seconds
   and the answers, which must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = Path(__file__).resolve().parent / "results-before-after.json"

FLEET = """
import json, time
from benchmarks.fleet import counting_events, one_rollout_each, run_engine
from sim.turn.transports import Transport
scenario = one_rollout_each(1_600)
started = time.process_time()
turns = run_engine(scenario, Transport.WS)
cpu_s = time.process_time() - started
with counting_events() as events:
    run_engine(scenario, Transport.WS)
print(json.dumps({"turns": turns, "cpu_s": cpu_s, "events_per_turn": events[0] / turns}))
"""

REPLICATION = """
import json, time
from models.loading import load_scenario
from sim.capacity.objectives import with_agents
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport
scenario = with_agents(load_scenario("codex-spark", ["load.duration_s=120"]), 1_469)
started = time.process_time()
run = simulate_fleet(scenario, Transport.WS, 0)
print(json.dumps({"cpu_s": time.process_time() - started, "rollouts": int(run.records.count)}))
"""

CAPACITY = """
import json
from benchmarks.capacity import timed_search
from sim.turn.transports import Transport
both = (Transport.HTTP, Transport.WS)
print(json.dumps(timed_search("codex-spark", ["load.duration_s=120"], both)))
"""


def export(ref: str, into: Path) -> Path:
    """The tree of ``ref`` (files only, no history) under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def measure(tree: Path, code: str) -> dict[str, Any]:
    """Run ``code`` with ``tree`` as the project, in this interpreter; its JSON line."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, check=True, capture_output=True, text=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compare(trees: dict[str, Path], code: str, rounds: int) -> dict[str, list[dict[str, Any]]]:
    """``rounds`` interleaved runs of ``code`` in each tree."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            runs[name].append(measure(tree, code))
    return runs


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="git ref measured as before")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--capacity", action="store_true", help="the capacity example too")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.before],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    results: dict[str, Any] = {"before": commit, "load_average_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"before": export(args.before, Path(scratch)), "after": ROOT}
        fleet = compare(trees, FLEET, args.rounds)
        rates = {name: max(r["turns"] / r["cpu_s"] for r in runs) for name, runs in fleet.items()}
        results["fleet_1600_ws"] = {
            "turns_per_cpu_s": rates,
            "events_per_turn": {name: runs[0]["events_per_turn"] for name, runs in fleet.items()},
            "after_over_before": rates["after"] / rates["before"],
            "rounds": fleet,
        }
        replication = compare(trees, REPLICATION, max(1, args.rounds - 1))
        best = {name: min(r["cpu_s"] for r in runs) for name, runs in replication.items()}
        results["replication_1469_ws"] = {
            "cpu_s": best,
            "before_over_after": best["before"] / best["after"],
            "rounds": replication,
        }
        if args.capacity:
            results["capacity_example"] = compare(trees, CAPACITY, 1)
    results["load_average_after"] = os.getloadavg()
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    return results


def report(results: dict[str, Any]) -> str:
    fleet, rep = results["fleet_1600_ws"], results["replication_1469_ws"]
    rate, events, cpu = fleet["turns_per_cpu_s"], fleet["events_per_turn"], rep["cpu_s"]
    lines = [
        f"before = {results['before']}; load average {results['load_average_before'][0]:.1f}"
        f" -> {results['load_average_after'][0]:.1f}",
        f"fleet DES over ws, 1,600 agents: {rate['before']:,.0f} -> {rate['after']:,.0f} turns"
        f" per CPU-second ({fleet['after_over_before']:.2f}x); events per turn"
        f" {events['before']:.2f} -> {events['after']:.2f}",
        f"capacity replication over ws, 1,469 agents: {cpu['before']:.2f} -> {cpu['after']:.2f}"
        f" CPU-seconds ({rep['before_over_after']:.2f}x)",
    ]
    for name, (run,) in results.get("capacity_example", {}).items():
        answers = ", ".join(
            f"{t} {a['capacity_agents']} (95% CI {a['capacity_ci95_agents']}, {a['probes']}"
            f" probes, {a['replications']} replications)"
            for t, a in run["answers"].items()
        )
        lines.append(
            f"capacity example, {name}: {run['wall_s']:.1f} s wall, {run['cpu_s']:.1f} CPU-s:"
            f" {answers}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
