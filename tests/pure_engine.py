"""Runs of the engine's pure-Python modules in a child process, on its own queue or on
SimPy's, for tests that compare them with the compiled modules of this process.

Where the compiled modules run (``sim.des.compiled``) the engine cannot take SimPy's
``Environment`` in place of its own (its pools hold a typed queue), and the ``.py``
modules are not importable beside the compiled ones: a child process with
``LOOPBUDGET_PURE_PYTHON`` set runs them and pickles what it returns.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from sim.des.compiled import PURE_PYTHON_VARIABLE
from sim.des.replication import Replication
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

TESTS = Path(__file__).parent

_CHILD = """
import pickle, sys
sys.path.insert(0, sys.argv[1])
import simpy
import sim.des
from sim.des import engine
from sim.des.runners import simulate, simulate_fleet
from sim.turn.transports import Transport
from test_kernel import case, one_agent_scenario
assert not sim.des.COMPILED
kind, name, transport, on_simpy = sys.argv[2:]
if on_simpy == "simpy":
    engine.Environment = simpy.Environment
if kind == "fleet":
    result = simulate_fleet(case(name), Transport(transport), 1, trace_rollouts=3)
else:
    result = simulate(one_agent_scenario(), Transport(transport), 300, reference=True)
sys.stdout.buffer.write(pickle.dumps(result))
"""


def _run(kind: str, name: str, transport: Transport, on_simpy: bool) -> object:
    environment = {**os.environ, PURE_PYTHON_VARIABLE: "1"}
    args = [TESTS, kind, name, transport.value, "simpy" if on_simpy else "own"]
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, args)],
        env=environment,
        cwd=TESTS.parent,
        capture_output=True,
        check=True,
    )
    return pickle.loads(child.stdout)


def fleet(name: str, transport: Transport, on_simpy: bool = False) -> Replication:
    """``test_kernel``'s fleet case ``name`` (replication 1, 3 traced rollouts), pure Python."""
    result = _run("fleet", name, transport, on_simpy)
    assert isinstance(result, Replication)
    return result


def one_agent(on_simpy: bool = False) -> RolloutRecords:
    """``test_kernel``'s single agent (300 rollouts on the queue over HTTP), pure Python."""
    result = _run("one agent", "", Transport.HTTP, on_simpy)
    assert isinstance(result, RolloutRecords)
    return result
