"""The fleet DES's figure of ``benchmarks.waits``: turns per CPU-second of
``benchmarks.fleet``'s load on the engine's own event queue, and on ``simpy.Environment``
(the same events, bit for bit; the engine's ``.py`` modules in a child process where the
compiled ones run in this one)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.cpu_time import ROOT, best_cpu_s
from sim.turn.transports import Transport


def on_simpy(run: Callable[[], object]) -> Callable[[], object]:
    """``run`` with the engine on ``simpy.Environment`` instead of its own event queue."""
    import simpy

    from sim.des import engine

    def patched() -> object:
        own = engine.Environment
        engine.Environment = simpy.Environment  # type: ignore[misc,assignment]
        try:
            return run()
        finally:
            engine.Environment = own  # type: ignore[misc]

    return patched


_ON_SIMPY_CHILD = """
import gc, sys, time
import simpy
from benchmarks.fleet import one_rollout_each, run_engine
from sim.des import engine
from sim.turn.transports import Transport
engine.Environment = simpy.Environment
scenario = one_rollout_each(int(sys.argv[1]))
gc.collect()
began = time.process_time()
run_engine(scenario, Transport.WS)
print(time.process_time() - began)
"""


def simpy_cpu_s(agents: int) -> float:
    """CPU seconds of one run of ``benchmarks.fleet``'s load on SimPy's queue: the ``.py``
    modules of the engine in a child process where the compiled ones run in this one
    (``sim.des.compiled``: they take only their own queue)."""
    import sim.des
    from benchmarks.fleet import one_rollout_each, run_engine

    if not sim.des.COMPILED:
        scenario = one_rollout_each(agents)
        return best_cpu_s([on_simpy(lambda: run_engine(scenario, Transport.WS))], 1)[0]
    child = subprocess.run(
        [sys.executable, "-c", _ON_SIMPY_CHILD, str(agents)],
        env={**os.environ, "LOOPBUDGET_PURE_PYTHON": "1"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(child.stdout)


def fleet(sizes: Sequence[int], repeats: int) -> dict[str, Any]:
    """The engine on its own event queue, and on SimPy's (the same events, bit for bit)."""
    from benchmarks.fleet import one_rollout_each, run_engine

    rates, on_simpy_rates = {}, {}
    for agents in sizes:
        scenario = one_rollout_each(agents)
        turns = run_engine(scenario, Transport.WS)

        def run(s: Any = scenario) -> int:
            return run_engine(s, Transport.WS)

        seconds, simpy_seconds = float("inf"), float("inf")
        for _ in range(repeats):
            seconds = min(seconds, best_cpu_s([run], 1)[0])
            simpy_seconds = min(simpy_seconds, simpy_cpu_s(agents))
        rates[str(agents)] = turns / seconds
        on_simpy_rates[str(agents)] = turns / simpy_seconds
    smallest = rates[str(sizes[0])]
    return {
        "transport": Transport.WS.value,
        "turns_per_cpu_s": rates,
        "on_simpy_turns_per_cpu_s": on_simpy_rates,
        "over_simpy": {agents: rate / on_simpy_rates[agents] for agents, rate in rates.items()},
        "over_smallest": {agents: rate / smallest for agents, rate in rates.items()},
    }
