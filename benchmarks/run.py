"""Entry point: ``python -m benchmarks.run [--quick] [--repeats N] [--output PATH]``.

Measures, in one process, the discrete-event engine's simulated turns per second
on codex-spark (http and ws) next to two bare SimPy skeletons, the analytic
engine against a DES batch, and (each in its own subprocess) the peak memory of
a large and a small run; prints a table and writes the results as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from dataclasses import asdict, dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

from benchmarks.memory import METHODS, SCENARIO, measure_memory
from benchmarks.report import format_report
from benchmarks.speed import (
    Speed,
    analytic_against_des,
    coalesced_means_s,
    des_workload,
    measure,
    skeleton_workload,
    stage_means_s,
)
from models.loading import load_scenario
from sim.des.runners import simulate
from sim.turn.transports import Transport

OUTPUTS = {
    "full": Path(__file__).resolve().parent / "results.json",
    "quick": Path(__file__).resolve().parent / "results-quick.json",
}
"""Default JSON files: a smoke check does not overwrite the recorded full run."""
MEMORY_TRANSPORT = Transport.WS
ANALYTIC_TRANSPORT = Transport.WS


@dataclass(frozen=True)
class Sizes:
    """How much work each measurement does."""

    speed_rollouts: int
    repeats: int
    memory_rollouts: tuple[int, int]
    """A small and a large run, to see how the peak scales."""
    batch_rollouts: int
    analytic_evaluations: int


FULL = Sizes(
    speed_rollouts=5_000,
    repeats=3,
    memory_rollouts=(10_000, 100_000),
    batch_rollouts=500,
    analytic_evaluations=200,
)
QUICK = Sizes(
    speed_rollouts=300,
    repeats=3,
    memory_rollouts=(500, 5_000),
    batch_rollouts=500,
    analytic_evaluations=20,
)


def measure_all(sizes: Sizes) -> dict[str, Any]:
    """All measurements, as one JSON-ready object."""
    return {
        "scenario": SCENARIO,
        "sizes": asdict(sizes),
        "machine": machine(),
        "speed": measure_speed(sizes),
        "analytic": measure_analytic(sizes),
        "memory": measure_memory_scaling(sizes),
    }


def machine() -> dict[str, Any]:
    """Where the numbers were measured, and how busy the machine was when they started."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "numpy": version("numpy"),
        "simpy": version("simpy"),
        "load_average_at_start": list(os.getloadavg()),
    }


def measure_speed(sizes: Sizes) -> dict[str, Any]:
    """The engine on both transports, then both skeletons over the very same turns."""
    scenario = load_scenario(SCENARIO)
    rollouts = sizes.speed_rollouts
    turns = simulate(scenario, Transport.WS, rollouts).turns.astype(int).tolist()
    stage_s = stage_means_s(scenario, Transport.WS)
    *engines, per_stage, coalesced = measure(
        [
            des_workload(scenario, Transport.HTTP, rollouts),
            des_workload(scenario, Transport.WS, rollouts),
            skeleton_workload("skeleton: 1 timeout per stage", turns, stage_s),
            skeleton_workload("skeleton: request + tool", turns, coalesced_means_s(stage_s)),
        ],
        sizes.repeats,
    )
    return {
        "rollouts": rollouts,
        "repeats": sizes.repeats,
        "models": [_speed_row(s) for s in (*engines, per_stage, coalesced)],
        "ratios": {
            engine.model: {
                "turns_per_s_vs_per_stage_skeleton": engine.turns_per_s / per_stage.turns_per_s,
                "turns_per_s_vs_coalesced_skeleton": engine.turns_per_s / coalesced.turns_per_s,
                "events_per_s_vs_coalesced_skeleton": engine.events_per_s / coalesced.events_per_s,
            }
            for engine in engines
        },
    }


def measure_analytic(sizes: Sizes) -> dict[str, Any]:
    """Seconds per ``expect`` call against seconds per DES batch of the same scenario."""
    evaluation_s, batch_s = analytic_against_des(
        load_scenario(SCENARIO),
        ANALYTIC_TRANSPORT,
        sizes.analytic_evaluations,
        sizes.batch_rollouts,
        sizes.repeats,
    )
    return {
        "transport": ANALYTIC_TRANSPORT.value,
        "evaluation_s": evaluation_s,
        "evaluations_per_s": 1 / evaluation_s,
        "des_batch_rollouts": sizes.batch_rollouts,
        "des_batch_s": batch_s,
        "des_batches_per_s": 1 / batch_s,
        "evaluations_per_des_batch": batch_s / evaluation_s,
    }


def measure_memory_scaling(sizes: Sizes) -> dict[str, Any]:
    """Both methods on a small and a large run; how the peak grows per added turn."""
    runs = [
        measure_memory(rollouts, MEMORY_TRANSPORT, method)
        for rollouts in sizes.memory_rollouts
        for method in METHODS
    ]
    marginal = {}
    for method in METHODS:
        small, large = (run for run in runs if run.method == method)
        added_turns = large.turns - small.turns
        marginal[method] = {
            "peak_bytes_per_turn": (large.peak_bytes - small.peak_bytes) / added_turns,
            "retained_bytes_per_turn": (large.retained_bytes - small.retained_bytes) / added_turns,
            "stage_matrix_bytes_per_turn": (large.stage_matrix_bytes - small.stage_matrix_bytes)
            / added_turns,
        }
    return {
        "transport": MEMORY_TRANSPORT.value,
        "runs": [
            {
                **asdict(run),
                "rollout_arrays_bytes": run.rollout_arrays_bytes,
                "peak_vs_retained": run.peak_bytes / run.retained_bytes,
                "peak_vs_stage_matrix": run.peak_bytes / run.stage_matrix_bytes,
            }
            for run in runs
        ],
        "marginal": marginal,
    }


def _speed_row(speed: Speed) -> dict[str, Any]:
    return {
        **asdict(speed),
        "turns_per_s": speed.turns_per_s,
        "events_per_s": speed.events_per_s,
        "events_per_turn": speed.events_per_turn,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Speed and memory of the loopbudget engines.")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke check")
    parser.add_argument(
        "--repeats", type=int, help="timed rounds, best kept (default 3); more on a busy machine"
    )
    parser.add_argument("--output", type=Path, help="JSON file (default: benchmarks/results*.json)")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    output = args.output or OUTPUTS[mode]
    sizes = QUICK if args.quick else FULL
    if args.repeats is not None:
        sizes = replace(sizes, repeats=args.repeats)
    results = {"mode": mode, **measure_all(sizes)}
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(format_report(results))
    print(f"\nwritten to {output}")


if __name__ == "__main__":
    main()
