"""Speed where users wait: ``python -m benchmarks.waits [--quick] [--output PATH]``.

Each figure is measured in CPU seconds (``time.process_time``, or the CPU of a
child process) next to its baseline in the same run, and reported as a ratio:

1. One agent without contention, turns per CPU-second: the vectorised pass
   (``sim.des.vectorised``, what ``simulate`` runs) against the SimPy DES on the
   same rollouts (``reference=True``), the two-timeout SimPy skeleton over the
   same turns, and a numpy ceiling: the same draws and one variant's stage costs
   summed per rollout, with no connection state and no records.
2. An analytic sweep of 10,000 points end to end (``run_sweep`` in this process,
   Parquet parts included) against the batched engine alone on the same points
   (``expect_columns``, both transports, column form built beforehand).
3. Start-up: ``loopbudget --help``, a one-line error and ``run codex-spark:ws``
   (500 rollouts) against a bare interpreter importing numpy.
4. The fleet DES over WebSocket at 100, 400 and 1,600 agents, each running one
   31-turn rollout staggered over 30 s (``benchmarks.fleet``'s load), turns per
   CPU-second against the 100-agent figure (how the cost per turn grows) and
   against the same engine on ``simpy.Environment`` (the same events, bit for bit;
   its ``.py`` modules in a child process where the compiled ones run here).

Rounds are interleaved (each round runs every model once) and the best round of
each is kept, so a burst of load elsewhere hits every model alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.cpu_time import ROOT, best_cpu_s, child_cpu_s
from benchmarks.fleet_waits import fleet
from benchmarks.skeleton import run_skeleton
from benchmarks.speed import coalesced_means_s, stage_means_s
from models.costs import stage_costs
from models.loading import load_scenario
from models.stages import Stage
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect_columns
from sim.des.draws import draw_turns
from sim.des.runners import simulate
from sim.des.streams import BLOCK_ROLLOUTS
from sim.sweep.execute import chunk_tasks, run_sweep, sweep_context
from sim.sweep.sweepfile import load_sweep
from sim.sweep.tasks import analytic_scenario
from sim.turn.transports import Transport, warm_turn_work

OUTPUT = Path(__file__).resolve().parent / "results-waits.json"
QUICK_OUTPUT = Path(__file__).resolve().parent / "results-waits-quick.json"
GOALS = {
    "vectorised_turns_per_cpu_s": 3_000_000,
    "vectorised_over_skeleton": 4.0,
    "vectorised_over_ceiling": 0.45,
    "sweep_points_per_cpu_s": 20_000,
    "engine_points_per_cpu_s": 100_000,
    "help_cpu_s": 0.4,
    "error_cpu_s": 0.4,
    "run_cpu_s": 0.8,
    "fleet_1600_turns_per_cpu_s": 40_000,
}
"""The goals each figure is held to (docs/performance.md)."""


def numpy_ceiling(scenario: Any, transport: Transport, rollouts: int) -> float:
    """The same draws and one variant's work and costs, summed per rollout: what any pass
    must do."""
    total = 0.0
    for block, first in enumerate(range(0, rollouts, BLOCK_ROLLOUTS)):
        turns = draw_turns(scenario, block, min(BLOCK_ROLLOUTS, rollouts - first))
        costs = stage_costs(scenario, warm_turn_work(scenario, transport, turns))
        turn_s = costs.request_s + costs.stage_s[Stage.TOOL]
        total += float(np.add.reduceat(turn_s, turns.offsets[:-1]).sum())
    return total


def single_agent(rollouts: int, repeats: int) -> dict[str, Any]:
    scenario = load_scenario("codex-spark")
    transport = Transport.WS
    records = simulate(scenario, transport, rollouts)
    turns = int(records.turns.sum())
    per_rollout = records.turns.astype(int).tolist()
    coalesced = coalesced_means_s(stage_means_s(scenario, transport))
    names = ("vectorised", "event_queue", "skeleton_request_tool", "numpy_ceiling")
    seconds = best_cpu_s(
        [
            lambda: simulate(scenario, transport, rollouts),
            lambda: simulate(scenario, transport, rollouts, reference=True),
            lambda: run_skeleton(per_rollout, coalesced),
            lambda: numpy_ceiling(scenario, transport, rollouts),
        ],
        repeats,
    )
    rate = {name: turns / s for name, s in zip(names, seconds, strict=True)}
    return {
        "transport": transport.value,
        "rollouts": rollouts,
        "turns": turns,
        "turns_per_cpu_s": rate,
        "vectorised_over_event_queue": rate["vectorised"] / rate["event_queue"],
        "vectorised_over_skeleton": rate["vectorised"] / rate["skeleton_request_tool"],
        "vectorised_over_ceiling": rate["vectorised"] / rate["numpy_ceiling"],
    }


def sweep(points: int, repeats: int) -> dict[str, Any]:
    text = (ROOT / "sweeps" / "amdahl.toml").read_text()
    folder = Path(tempfile.mkdtemp(prefix="loopbudget-bench-"))
    try:
        path = folder / "sweep.toml"
        path.write_text(text.replace("num = 97", f"num = {points - 3}"))
        loaded = load_sweep(path)
        context = sweep_context(loaded)
        tasks = [task for chunk in chunk_tasks(loaded) for task in chunk]
        columns = column_form([analytic_scenario(context, task) for task in tasks])
        out = folder / "out"

        def engine() -> None:
            for transport in context.transports:
                expect_columns(columns, transport)

        def end_to_end() -> None:
            shutil.rmtree(out, ignore_errors=True)
            run_sweep(loaded, out, show_progress=False)

        engine_s, sweep_s = best_cpu_s([engine, end_to_end], repeats)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "points": loaded.runs,
        "transports": len(context.transports),
        "engine_points_per_cpu_s": loaded.runs / engine_s,
        "sweep_points_per_cpu_s": loaded.runs / sweep_s,
        "sweep_over_engine": engine_s / sweep_s,
    }


def bytecode_compiled() -> bool:
    """Whether the venv's numpy and this project's engine have compiled bytecode (``make
    bench`` compiles both): without it every start compiles them again, which doubles
    each figure below."""
    import numpy

    import sim.des.engine

    sources = (numpy.__file__, sim.des.engine.__file__)
    return all(Path(importlib.util.cache_from_source(s)).exists() for s in sources if s)


def start_up(repeats: int) -> dict[str, Any]:
    command = str(Path(sys.executable).with_name("loopbudget"))
    cases = {
        "numpy_import_cpu_s": [sys.executable, "-c", "import numpy"],
        "help_cpu_s": [command, "--help"],
        "error_cpu_s": [command, "run", "no-such-preset:ws"],
        "run_cpu_s": [command, "run", "codex-spark:ws"],
    }
    found = {name: child_cpu_s(args, repeats) for name, args in cases.items()}
    base = found["numpy_import_cpu_s"]
    return {
        "bytecode_compiled": bytecode_compiled(),
        **found,
        **{
            f"{k}_over_numpy_import": v / base
            for k, v in found.items()
            if k != "numpy_import_cpu_s"
        },
    }


def report(results: dict[str, Any]) -> str:
    one, sw, up = results["single_agent"], results["sweep"], results["start_up"]
    rate = one["turns_per_cpu_s"]
    on_simpy = results["fleet"]["on_simpy_turns_per_cpu_s"]
    lines = [
        f"load average {results['load_average_before']:.1f} -> {results['load_average_after']:.1f}"
        f" on {os.cpu_count()} CPUs",
        f"one agent ({one['turns']:,} turns), turns per CPU-second:",
        *[f"  {name:24s} {value:>14,.0f}" for name, value in rate.items()],
        f"  vectorised / event queue {one['vectorised_over_event_queue']:.1f}x, / skeleton "
        f"{one['vectorised_over_skeleton']:.1f}x (goal 4), / numpy ceiling "
        f"{one['vectorised_over_ceiling']:.2f} (goal 0.45)",
        f"analytic sweep, {sw['points']:,} points x {sw['transports']} transports:",
        f"  engine alone {sw['engine_points_per_cpu_s']:>10,.0f} points per CPU-second",
        f"  end to end   {sw['sweep_points_per_cpu_s']:>10,.0f} points per CPU-second "
        f"({sw['sweep_over_engine']:.2f} of the engine)",
        "start-up, CPU seconds"
        + ("" if up["bytecode_compiled"] else " (bytecode not compiled: run `make bytecode`)")
        + ":",
        *[f"  {name:24s} {value:.3f}" for name, value in up.items() if name.endswith("cpu_s")],
        "fleet DES over ws, turns per CPU-second (on SimPy's event queue):",
        *[
            f"  {agents:>5s} agents {rate:>10,.0f} ({on_simpy[agents]:,.0f})"
            for agents, rate in results["fleet"]["turns_per_cpu_s"].items()
        ],
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke check)")
    parser.add_argument("--output", type=Path, help="JSON file (default: results-waits.json)")
    args = parser.parse_args(argv)
    rollouts, points, repeats = (300, 400, 1) if args.quick else (5_000, 10_000, 3)
    agents = (20, 40) if args.quick else (100, 400, 1_600)
    results: dict[str, Any] = {"load_average_before": os.getloadavg()[0], "goals": GOALS}
    results["single_agent"] = single_agent(rollouts, repeats)
    results["sweep"] = sweep(points, repeats)
    results["start_up"] = start_up(repeats)
    results["fleet"] = fleet(agents, min(repeats, 2))
    results["load_average_after"] = os.getloadavg()[0]
    output = args.output or (QUICK_OUTPUT if args.quick else OUTPUT)
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))
    print(f"\nwritten to {output}")
    return results


if __name__ == "__main__":
    main()
