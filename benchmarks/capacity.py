"""Capacity benchmark: ``python -m benchmarks.capacity [--quick] [--output PATH]``.

Times the README's capacity example (codex-spark, TTFT p95 <= 1 s and e2e p95 <=
40 s, ``load.duration_s = 120``) as ``loopbudget capacity`` runs it: both
transports searched at once on one local worker process per core.  Then each
transport alone, to show what each costs.  Writes wall and CPU seconds, the
probes and replications, the answers and the machine (load average included:
other processes on the machine lengthen the wall time, not the CPU time).
``--quick`` runs the tiny fleet instead, a smoke check of the harness.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

from benchmarks.run import machine
from models.loading import load_scenario
from sim.capacity.objectives import Slo, SloMetric
from sim.capacity.search import search_all
from sim.sweep.workers import replication_workers
from sim.turn.transports import Transport

OUTPUT = Path(__file__).resolve().parent / "results-capacity.json"
QUICK_OUTPUT = Path(__file__).resolve().parent / "results-capacity-quick.json"
"""A smoke check's output, which git ignores, so it never overwrites the recorded run."""
SLOS = [Slo(SloMetric.TTFT_P95_S, 1.0), Slo(SloMetric.E2E_P95_S, 40.0)]
TINY = str(Path(__file__).resolve().parents[1] / "tests" / "data" / "tiny-fleet.toml")


def cpu_s() -> float:
    """CPU seconds of this process and of its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_search(source: str, overrides: list[str], transports: tuple[Transport, ...]) -> dict:
    """One capacity run in fresh worker processes: wall and CPU seconds and the answers."""
    scenario = load_scenario(source, overrides)
    started, cpu_started = time.perf_counter(), cpu_s()
    with replication_workers(None, None) as pool:
        found = search_all(scenario, transports, SLOS, 100_000, pool.executor, pool.parallel)
        workers = pool.parallel
    return {
        "transports": [t.value for t in transports],
        "workers": workers,
        "wall_s": time.perf_counter() - started,
        "cpu_s": cpu_s() - cpu_started,
        "answers": {
            t.value: {
                "capacity_agents": r.capacity_agents,
                "first_failing_agents": r.first_failing_agents,
                "capacity_ci95_agents": list(r.ci95_agents),
                "probes": len(r.evaluations),
                "replications": r.replications,
                "analytic_estimate_agents": r.analytic_estimate_agents,
            }
            for t, r in found.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tiny fleet, a smoke check")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    output = args.output or (QUICK_OUTPUT if args.quick else OUTPUT)
    source, overrides = (TINY, []) if args.quick else ("codex-spark", ["load.duration_s=120"])
    results: dict[str, Any] = {"machine": machine(), "source": source, "overrides": overrides}
    runs = [(Transport.HTTP, Transport.WS), (Transport.HTTP,), (Transport.WS,)]
    results["runs"] = [timed_search(source, overrides, transports) for transports in runs]
    for run in results["runs"]:
        answers = ", ".join(
            f"{name} {a['capacity_agents']} ({a['probes']} probes, {a['replications']} reps)"
            for name, a in run["answers"].items()
        )
        print(
            f"{'+'.join(run['transports']):8s} {run['wall_s']:6.1f} s wall "
            f"{run['cpu_s']:6.1f} s CPU on {run['workers']} workers: {answers}"
        )
    output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
