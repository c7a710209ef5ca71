"""Sweep throughput: ``python -m benchmarks.sweep_bench [--quick] [--output PATH]``.

1. Analytic points per second on the Amdahl sweep (``sweeps/amdahl.toml``:
   codex-spark with the decode rate swept as 100 constants), its points tiled
   to ``analytic_points`` and each validated on its own as a sweep does (so no
   two points share an object).  Per transport (http, ws): the batched engine
   on a column form built beforehand (``expect_columns``: points x one
   transport per CPU second), the batched entry point from scenarios
   (``expect_many``: the column form included), and point by point
   (``expect``).  Also the column form alone, a ws batch that rotates (13 s
   lifetime: each point follows its connection's age on a grid), and the sweep
   end to end (the engine plus building
   each point's rows and the Arrow table of a part) batched and point by point.
2. DES sweep throughput on a warm local Dask cluster of 1 and of 2 worker
   processes, and the parallel efficiency (rate with 2 / (2 x rate with 1)).

Each figure is the best of a few repeats, and the load average is printed with
them: other processes may share the machine.  The analytic figures count this
process's CPU time (points per CPU second), so they hold under a shared
machine; the DES figures are wall-clock rates, as parallel efficiency must be.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from models.loading import raw_scenario
from sim.analysis.run import Engine, Run, execute
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.engine import expect, expect_columns, expect_many
from sim.sweep.execute import chunk_tasks, run_sweep, sweep_context
from sim.sweep.points import point_scenario
from sim.sweep.rows import run_rows, to_table
from sim.sweep.sweepfile import Sweep, SweepFile, load_sweep
from sim.sweep.tasks import Context, Task, analytic_scenario, run_chunk_table
from sim.turn.transports import Transport

AMDAHL = Path(__file__).resolve().parent.parent / "sweeps" / "amdahl.toml"
ROTATING = ("connection.ws_lifetime_s", 13.0)
"""A lifetime shorter than a rollout: every point of the grid measurement rotates."""


@dataclass(frozen=True)
class Sizes:
    """How much work each measurement does."""

    analytic_points: int
    reference_points: int
    """Points evaluated one by one (the slow reference)."""
    grid_points: int
    """Points of the rotating batch (each follows its connection's age on a grid)."""
    des_points: int
    des_rollouts: int
    repeats: int


FULL = Sizes(4096, reference_points=512, grid_points=64, des_points=64, des_rollouts=200, repeats=3)
QUICK = Sizes(128, reference_points=32, grid_points=4, des_points=4, des_rollouts=10, repeats=1)
DES_POINTS_PER_PART = (1, 4)
"""Points per Parquet part in the DES measurement: the default, and fewer, larger parts."""
TRANSPORTS = (Transport.HTTP, Transport.WS)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke check)")
    parser.add_argument("--skip-des", action="store_true", help="analytic measurements only")
    parser.add_argument("--output", type=Path, help="also write the results as JSON")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    results: dict[str, Any] = {
        "loopbudget_version": version("loopbudget"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_before": os.getloadavg()[0],
        "sizes": asdict(sizes),
        "analytic": analytic(sizes),
    }
    if not args.skip_des:
        results["des"] = des(sizes)
    results["load_average_after"] = os.getloadavg()[0]
    print(report(results))
    if args.output is not None:
        args.output.write_text(json.dumps(results, indent=2) + "\n")
    return results


def analytic(sizes: Sizes) -> dict[str, Any]:
    """Points per CPU second on the tiled Amdahl sweep (see the module docstring)."""
    sweep = load_sweep(AMDAHL)
    context = sweep_context(sweep)
    design = [task for chunk in chunk_tasks(sweep) for task in chunk]
    tiled = itertools.islice(itertools.cycle(design), sizes.analytic_points)
    tasks = [Task(point, task.seed, task.assignments) for point, task in enumerate(tiled)]
    scenarios = [analytic_scenario(context, task) for task in tasks]
    few = scenarios[:: max(1, len(scenarios) // sizes.reference_points)]
    reference = tasks[:: max(1, len(tasks) // sizes.reference_points)]
    rotating = [
        point_scenario(context.base_raw, {**task.assignments, ROTATING[0]: ROTATING[1]})
        for task in tasks[: sizes.grid_points]
    ]
    columns = column_form(scenarios)
    rotating_columns = column_form(rotating)
    cpu = time.process_time

    def rate(points: int, work: Callable[[], object]) -> float:
        return points / _best(work, sizes.repeats, cpu)

    per_transport = {
        t.value: {
            "engine": rate(len(scenarios), lambda t=t: expect_columns(columns, t)),
            "batched": rate(len(scenarios), lambda t=t: expect_many(scenarios, t)),
            "point_by_point": rate(len(few), lambda t=t: [expect(s, t) for s in few]),
        }
        for t in TRANSPORTS
    }

    def batched_sweep() -> None:
        for first in range(0, len(tasks), sweep.points_per_part):
            run_chunk_table(context, tasks[first : first + sweep.points_per_part])

    def point_sweep() -> None:
        to_table(
            [row for task in reference for row in _point_by_point(context, task)],
            context.axis_kinds,
        )

    sweep_batched = rate(len(tasks), batched_sweep)
    sweep_point = rate(len(reference), point_sweep)
    return {
        "points": len(tasks),
        "distinct_points": len(design),
        "column_form_points_per_s": rate(len(scenarios), lambda: column_form(scenarios)),
        "rotating_ws_engine_points_per_s": rate(
            len(rotating), lambda: expect_columns(rotating_columns, Transport.WS)
        ),
        "per_transport_points_per_s": per_transport,
        "engine_ratio": {
            name: r["engine"] / r["point_by_point"] for name, r in per_transport.items()
        },
        "sweep_batched_points_per_s": sweep_batched,
        "sweep_point_by_point_points_per_s": sweep_point,
        "sweep_ratio": sweep_batched / sweep_point,
    }


def des(sizes: Sizes) -> dict[str, Any]:
    """DES sweep points per second on a warm local cluster of 1 and 2 workers.

    With one point per part (the default: a crash loses no computed point) and
    with four (fewer parts for the ``sweep`` process to receive and write).
    """
    from dask.distributed import LocalCluster

    rates: dict[tuple[int, int], float] = {}
    for workers in (1, 2):
        with LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster:
            address = cluster.scheduler_address
            _warm(address)
            for points_per_part in DES_POINTS_PER_PART:
                sweep = _des_sweep(sizes, points_per_part)

                def once(sweep: Sweep = sweep, address: str = address) -> None:
                    with tempfile.TemporaryDirectory() as out:
                        run_sweep(sweep, Path(out), scheduler=address, show_progress=False)

                rates[workers, points_per_part] = sweep.runs / _best(once, sizes.repeats)
    return {
        "points": sizes.des_points,
        "rollouts_per_point": sizes.des_rollouts,
        "transports": 2,
        "by_points_per_part": {
            str(part): {
                "points_per_s_1_worker": rates[1, part],
                "points_per_s_2_workers": rates[2, part],
                "speedup": rates[2, part] / rates[1, part],
                "parallel_efficiency": rates[2, part] / (2 * rates[1, part]),
            }
            for part in DES_POINTS_PER_PART
        },
    }


def _des_sweep(sizes: Sizes, points_per_part: int) -> Sweep:
    axis = {"path": "network.rtt_ms", "start": 5.0, "stop": 200.0, "num": sizes.des_points}
    return _sweep(
        "des",
        engine="des",
        rollouts=sizes.des_rollouts,
        points_per_part=points_per_part,
        axes=[axis],
    )


def report(results: dict[str, Any]) -> str:
    a = results["analytic"]
    lines = [
        f"loopbudget {results['loopbudget_version']}, Python {results['python']}, "
        f"{results['cpus']} CPUs, load average {results['load_average_before']:.1f} before, "
        f"{results['load_average_after']:.1f} after",
        f"analytic, Amdahl sweep: {a['distinct_points']} points tiled to {a['points']:,}, "
        "points per CPU second (one transport each):",
        f"  column form alone: {a['column_form_points_per_s']:,.0f}",
    ]
    for name, r in a["per_transport_points_per_s"].items():
        lines.append(
            f"  {name}: engine {r['engine']:,.0f}, expect_many {r['batched']:,.0f}, "
            f"point by point {r['point_by_point']:,.0f} (engine / point "
            f"{a['engine_ratio'][name]:.0f}x)"
        )
    lines.append(
        f"  ws rotating in every rollout (13 s lifetime, on the age grid): engine "
        f"{a['rotating_ws_engine_points_per_s']:,.0f}"
    )
    lines.append(
        f"  sweep end to end (http and ws per point): batched "
        f"{a['sweep_batched_points_per_s']:,.0f}, point by point "
        f"{a['sweep_point_by_point_points_per_s']:,.0f}, ratio {a['sweep_ratio']:.1f}"
    )
    if "des" in results:
        d = results["des"]
        lines.append(
            f"des, {d['points']} points x {d['transports']} transports x "
            f"{d['rollouts_per_point']} rollouts, warm LocalCluster, wall clock:"
        )
        for part, r in d["by_points_per_part"].items():
            lines.append(
                f"  {part} per part: 1 worker {r['points_per_s_1_worker']:.1f} points/s, "
                f"2 workers {r['points_per_s_2_workers']:.1f} points/s, "
                f"speedup {r['speedup']:.2f}, parallel efficiency {r['parallel_efficiency']:.0%}"
            )
    return "\n".join(lines)


def _point_by_point(context: Context, task: Task) -> list[dict[str, Any]]:
    """The rows of one point as a sweep without the batched engine would make them."""
    scenario = point_scenario(context.base_raw, task.assignments, task.seed)
    runs: dict[Transport, Run] = {
        t: execute(context.spec(t), scenario, Engine.ANALYTIC, context.rollouts)
        for t in context.transports
    }
    return run_rows(task.head(context), runs, context.baseline)


def _sweep(name: str, **fields: Any) -> Sweep:
    """A sweep around codex-spark comparing http (the baseline) with ws."""
    file = SweepFile.model_validate(
        {"name": name, "base": "codex-spark", "transports": ["http", "ws"], **fields}
    )
    base_raw = raw_scenario("codex-spark")
    text = f"# benchmark sweep {name}\n"
    return Sweep(file, name, text, base_raw, (base_raw["seed"],), Transport.HTTP)


def _warm(address: str) -> None:
    """Import the engine in every worker before timing."""
    from dask.distributed import Client

    with Client(address) as client:
        client.run(lambda: __import__("sim.sweep.tasks"))


def _best(
    work: Callable[[], None], repeats: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The shortest of ``repeats`` runs of ``work`` after one untimed run, in ``clock`` seconds."""
    work()
    times = []
    for _ in range(repeats):
        started = clock()
        work()
        times.append(clock() - started)
    return min(times)


if __name__ == "__main__":
    main()
