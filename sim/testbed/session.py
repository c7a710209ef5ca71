"""A testbed run from start to end: emulator, calibration, agent loops, simulation, comparison.

``run_testbed`` starts the emulator on the time-scaled scenario (unless a base
URL is given), measures the client and the network, runs rollouts 0..N-1 of
each transport through the SDK one after another, then simulates the same
rollouts with the client and network measured on those rollouts' own turns
(the SDK's costs drift with a shared machine's load) and puts both sides
together; the simulation with the costs calibrated beforehand, on separate
rollouts interleaved with the measured ones, is reported beside as the
prediction.  The emulator sits behind the network the scenario asks for
(``network``: netem where the machine allows it, else an emulated link), and the
result says which.  Against another endpoint (a base URL) the server decides how
many turns and calls a rollout takes, so the simulation runs the turns that
actually happened (``observed``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass, replace

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.des.runners import simulate_turns
from sim.testbed import clock
from sim.testbed.calibrate import calibration_rollout, measure_client
from sim.testbed.clock import TimerLead
from sim.testbed.comparison import (
    measured_side,
    recovered_turn_cost_s,
    simulated_records,
    simulated_side,
)
from sim.testbed.driver import DEFAULT_TURN_LIMIT, Agent
from sim.testbed.emulated import check_emulated
from sim.testbed.fleet import measure_fleet, simulated_fleet
from sim.testbed.network import ENDPOINT, SCENARIO, Network, testbed_network
from sim.testbed.observe import ServerView, split_turns
from sim.testbed.observed import observed_turns
from sim.testbed.records import observed_shape
from sim.testbed.results import LiveResult, TransportResult
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time
from sim.turn.transports import Transport

Progress = Callable[[int], None]

DEFAULT_TIME_SCALE = 0.1
"""Wall seconds per scenario second for one agent; docs/testbed.md says how it was chosen."""
DEFAULT_FLEET_TIME_SCALE = 2.0
"""The same for a fleet: one driver process drives about 40 requests a second at this scale."""
SINGLE_AGENT_TRANSPORTS = (Transport.HTTP, Transport.HTTP_FULL, Transport.WS)
FLEET_REPLICATIONS = 10
"""Replications of the fleet simulation whose mean the one measured run is set against."""


@dataclass(frozen=True)
class Request:
    """What to run."""

    spec: str
    scenario: Scenario
    transports: tuple[Transport, ...]
    rollouts: int
    time_scale: float = DEFAULT_TIME_SCALE
    base_url: str | None = None
    api_key: str = DEFAULT_API_KEY
    turn_limit: int = DEFAULT_TURN_LIMIT
    network: str = SCENARIO
    """``scenario``: the scenario's round trip on a real (netem) or emulated link;
    ``loopback``: none added."""


def run_testbed(request: Request, progress: Progress | None = None) -> LiveResult:
    """Run ``request`` against its endpoint (a local emulator when none is given): one
    agent per transport, or the fleet of ``scenario.load`` when it has more than one."""
    check_emulated(request.scenario)
    scaled = scale_time(request.scenario, request.time_scale)
    measure = _measure_fleet if request.scenario.load.agents > 1 else _measure
    endpoint = request.base_url
    if endpoint is not None:
        if measure is _measure_fleet:
            raise ScenarioError("--base-url: a fleet run reads the local emulator's pools")
        result = clock.run(lambda: _measure(request, scaled, endpoint, None, progress))
        asked = Network(ENDPOINT, request.scenario.network.rtt_ms, "the endpoint's own network")
        return replace(result, network=asked.to_json())
    settings = ServerSettings(api_key=request.api_key)
    with (
        testbed_network(scaled, request.time_scale, request.network, settings) as (
            linked,
            prefix,
            network,
        ),
        emulator_process(scaled, linked, prefix) as base_url,
    ):
        view = ServerView(base_url, request.api_key)
        result = clock.run(lambda: measure(request, scaled, base_url, view, progress))
    ping_ms = result.client.get("ping_rtt_ms")
    if ping_ms is not None:
        network = replace(network, measured_rtt_ms=ping_ms / request.time_scale)
    return replace(result, network=network.to_json())


async def _measure_fleet(
    request: Request, scaled: Scenario, base_url: str, view: ServerView, progress: Progress | None
) -> LiveResult:
    lead = await TimerLead.measure()
    gc.freeze()  # the SDK's many types would make every full collection pause the agents
    results = {}
    for transport in request.transports:
        fleet = await measure_fleet(
            scaled, transport, base_url, request.api_key, lead, view, progress
        )
        simulated = simulated_fleet(fleet.client.apply(scaled), transport, FLEET_REPLICATIONS)
        results[transport.value] = TransportResult(
            transport.value,
            fleet.rollouts,
            fleet.side,
            simulated,
            errors=fleet.errors,
            client=fleet.client.to_json(),
            peak_sockets=fleet.peak_sockets,
            timer_lateness_s=await _lateness(view, lead),
        )
    return LiveResult(
        request.spec, request.time_scale, {}, results, agents=request.scenario.load.agents
    )


async def _measure(
    request: Request,
    scaled: Scenario,
    base_url: str,
    view: ServerView | None,
    progress: Progress | None,
) -> LiveResult:
    lead = await TimerLead.measure()
    if view is not None:
        client = await measure_client(scaled, base_url, request.api_key, lead)
        simulated_scenario = client.apply(scaled)
        client_json = client.to_json()
    else:
        simulated_scenario, client_json = scaled, {}
    results = {}
    per_token = scaled.network.bytes_per_token
    for transport in request.transports:
        agent = Agent(scaled, transport, base_url, request.api_key, lead, False, request.turn_limit)
        probe = Agent(scaled, transport, base_url, request.api_key, lead, calibration=True)
        rollouts, probes = [], []
        for index in range(request.rollouts):
            if view is not None:
                probes.append(await calibration_rollout(probe, index))
            rollouts.append(await agent.rollout(index))
            if progress is not None:
                progress(1)
        splits, predicted, used = [], None, client_json
        in_run_scenario = simulated_scenario
        if view is not None:
            await view.refresh()
            splits = split_turns(rollouts, view)
            before = client.refit(transport, split_turns(probes, view), per_token)
            during = before.refit(transport, splits, per_token, connections=False)
            in_run_scenario, used = during.apply(scaled), during.to_json()
            predicted = simulated_side(
                simulated_records(before.apply(scaled), transport, request.rollouts)
            )
        if view is not None:
            records = simulated_records(in_run_scenario, transport, request.rollouts)
        else:
            turns = observed_turns(in_run_scenario, rollouts)
            records = simulate_turns(in_run_scenario, transport, turns, keep_turns=True)
        simulated = replace(
            simulated_side(records),
            recovery_s=recovered_turn_cost_s(in_run_scenario, transport, rollouts),
        )
        results[transport.value] = TransportResult(
            transport.value,
            request.rollouts,
            measured_side(rollouts, splits),
            simulated,
            errors=sum(len(t.errors) for r in rollouts for t in r.turns),
            client=used,
            timer_lateness_s=await _lateness(view, lead),
            predicted=predicted,
            observed=observed_shape(rollouts),
        )
    return LiveResult(request.spec, request.time_scale, client_json, results)


async def _lateness(view: ServerView | None, lead: TimerLead) -> dict[str, dict[str, float]]:
    """The emulator's and the driver's recent timer lateness (seconds)."""
    lateness = {"driver": lead.lateness_s()}
    if view is not None:
        lateness["emulator"] = (await view.stats())["timer_lateness_s"]
    return lateness
