"""What a testbed run will ask of the machine, estimated before the emulator starts.

Both sides are counted: the driver's agents (each an SDK client with its
connection pool, its tasks and its records) and the simulations the run is
compared with (one agent: two runs of the rollouts per transport; a fleet:
``FLEET_REPLICATIONS`` replications).  ``testbed run --agents 100000`` grew to
3.4 GB before a MemoryError, and ``-n 100000000`` was accepted; both are now
refused in one line with the estimate and the cap.
"""

from __future__ import annotations

from models.loading import with_changes
from models.scenario import Scenario
from sim.analysis.estimates import Need, check, check_run, show_bytes
from sim.analysis.fleet_need import check_fleet
from sim.turn.transports import Transport

AGENT_BYTES = 2**20
"""A fleet agent in the driver: its SDK client, pool, tasks and records (measured 0.84 MB at
300 agents, the interpreter aside)."""
DRIVER_BYTES = 128 * 2**20
"""The driver's process before its agents: the interpreter, the SDK and the engine."""
SIMULATED_RUNS = 2
"""Simulations of one agent's rollouts per transport: with the client measured during the
run, and the prediction with the client calibrated beforehand."""


def check_testbed(
    spec: str,
    scenario: Scenario,
    transports: tuple[Transport, ...],
    rollouts: int,
    replications: int,
) -> None:
    """Refuse a run whose driver or simulations would pass a cap (``replications``: of the
    fleet simulation, when ``scenario.load`` has more than one agent)."""
    load = scenario.load
    if load.agents <= 1:
        for transport in transports:
            check_run(spec, scenario, transport, False, rollouts, runs=SIMULATED_RUNS)
        return
    driver = DRIVER_BYTES + load.agents * AGENT_BYTES
    basis = (
        f"{load.agents:,} agents in the driver x {show_bytes(AGENT_BYTES)} "
        f"+ {show_bytes(DRIVER_BYTES)} for the driver itself"
    )
    check(Need(f"{spec}: the driver", driver, basis, 0.0, "", 1, fewer="fewer agents"))
    simulated = with_changes(scenario, [f"load.replications={replications}"])
    for transport in transports:
        check_fleet(f"{spec}: its fleet simulation", simulated, transport)
