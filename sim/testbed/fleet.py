"""A fleet on the testbed: many agents share the emulator's pools, beside the fleet simulation.

The closed population of ``scenario.load`` runs as asyncio tasks on the SDK's
async client: each agent starts at a uniform offset within
``load.start_stagger_s``, then runs rollouts back to back with a drawn think
time between them.  Rollouts are numbered in start order, as the fleet
simulation numbers them, and only those that start inside the window
``[warmup_s, warmup_s + duration_s)`` are measured; as in the simulation, the
agents go on starting rollouts (not measured) after the window closes until
every measured one has finished, so the last measured rollouts meet the same
load as the first rather than a fleet winding down.  Pool utilization is the
server's, over the window.  The client and network
the simulation uses are fitted to the warm-up's turns (``calibrate``): a fleet's
client is busier than a lone agent's, and those turns are not measured.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from models.scenario import Scenario
from sim.des.replication import Replication
from sim.des.runners import simulate_fleet
from sim.des.streams import Draw, stream
from sim.testbed.calibrate import UNMEASURED, ClientCosts
from sim.testbed.clock import TimerLead
from sim.testbed.comparison import measured_side, simulated_side
from sim.testbed.driver import Agent
from sim.testbed.observe import ServerView, split_turns
from sim.testbed.records import RolloutRecord
from sim.testbed.results import Side
from sim.testbed.tools import DrawnBlocks
from sim.turn.records import concatenate
from sim.turn.transports import Transport

FLEET_REPLICATION = 0
"""The draws of the measured fleet (the simulation's first replication)."""


@dataclass(frozen=True)
class FleetMeasurement:
    """What the fleet run measured, and the client fitted to its warm-up."""

    side: Side
    rollouts: int
    errors: int
    peak_sockets: int
    client: ClientCosts
    records: list[RolloutRecord]
    """The measured rollouts, in the order they finished."""


async def measure_fleet(
    scenario: Scenario,
    transport: Transport,
    base_url: str,
    api_key: str,
    lead: TimerLead,
    view: ServerView,
    progress: Callable[[int], None] | None = None,
) -> FleetMeasurement:
    """Run the closed population of ``scenario.load`` against the emulator."""
    load = scenario.load
    start_s = time.monotonic()
    window = (start_s + load.warmup_s, start_s + load.warmup_s + load.duration_s)
    arrivals = stream(scenario.seed, 0, Draw.ARRIVALS, FLEET_REPLICATION)
    numbers = itertools.count()
    measured: list[RolloutRecord] = []
    warm_up: list[RolloutRecord] = []
    errors: list[BaseException] = []

    in_flight = [0]  # measured rollouts under way

    def loaded() -> bool:
        return time.monotonic() < window[1] or in_flight[0] > 0

    async def agent_loop(agent: Agent) -> None:
        await lead.sleep(float(arrivals.uniform(0.0, load.start_stagger_s)))
        while loaded():
            started_s = time.monotonic()
            inside = window[0] <= started_s < window[1]
            in_flight[0] += inside
            try:
                record = await agent.rollout(next(numbers), FLEET_REPLICATION)
            except Exception as error:  # a failed rollout is counted, the agent goes on
                errors.append(error)
                continue
            finally:
                in_flight[0] -= inside
            if inside:
                measured.append(record)
                if progress is not None:
                    progress(1)
            elif started_s < window[0]:
                warm_up.append(record)
            await lead.sleep(float(load.think_time_s.sample(arrivals, 1)[0]))

    drawn = DrawnBlocks(scenario)
    agents = [
        Agent(scenario, transport, base_url, api_key, lead, drawn=drawn) for _ in range(load.agents)
    ]
    await asyncio.gather(*(agent_loop(agent) for agent in agents))
    await view.refresh()
    side = measured_side(measured, split_turns(measured, view))
    utilization = await view.utilization(*window)
    stats = await view.stats()
    per_token = scenario.network.bytes_per_token
    return FleetMeasurement(
        side=Side(**{**side.__dict__, "utilization": utilization}),
        rollouts=len(measured),
        errors=len(errors) + sum(len(t.errors) for r in measured for t in r.turns),
        peak_sockets=int(stats["peak_sockets"]),
        client=UNMEASURED.refit(transport, split_turns(warm_up, view), per_token),
        records=measured,
    )


def simulated_fleet(scenario: Scenario, transport: Transport, replications: int) -> Side:
    """The fleet simulation of the same load: means over replications, pooled percentiles."""
    runs: list[Replication] = [simulate_fleet(scenario, transport, r) for r in range(replications)]
    side = simulated_side(concatenate([run.records for run in runs]))
    utilization = {
        pool.value: float(np.mean([run.pools[pool].utilization for run in runs]))
        for pool in runs[0].pools
    }
    return Side(**{**side.__dict__, "utilization": utilization})
