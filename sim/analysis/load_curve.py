"""A fleet at several load points: the one path the command line, the API and the
dashboard take, so each point is checked (caps, a window long enough to measure) before
any is simulated, whichever front end asks."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor

from models.scenario import Scenario
from sim.analysis.fleet_analytic import analytic_points
from sim.analysis.fleet_need import check_fleet
from sim.analysis.fleet_summary import fleet_result, load_point, run_fleet
from sim.analysis.load_points import load_scenarios
from sim.analysis.results import FleetResult
from sim.analysis.run import Engine
from sim.turn.transports import Transport

PointStarted = Callable[[Scenario], None]
PointDone = Callable[[FleetResult], None]


def load_curve(
    spec_text: str,
    scenario: Scenario,
    transport: Transport,
    engine: Engine,
    agents: list[int] | None = None,
    rates: list[float] | None = None,
    executor: Executor | None = None,
    started: PointStarted | None = None,
    done: PointDone | None = None,
) -> list[FleetResult]:
    """``scenario`` at closed populations (``agents``) or open arrival rates (``rates``, per
    second): the analytic queueing network, or the fleet DES with its replications on
    ``executor``.  ``started`` and ``done`` hear of each simulated point, so a caller can
    show progress and keep the points finished before a later one fails."""
    points = load_scenarios(scenario, agents, rates)
    if engine is Engine.ANALYTIC:
        return analytic_points(spec_text, points, transport)
    labels = check_points(spec_text, points, transport)
    results = []
    for point, label in zip(points, labels, strict=True):
        if started is not None:
            started(point)
        replications = run_fleet(point, transport, executor=executor, what=label)
        result = fleet_result(spec_text, point, transport, replications)
        results.append(result)
        if done is not None:
            done(result)
    return results


def check_points(spec_text: str, points: list[Scenario], transport: Transport) -> list[str]:
    """Refuse, in one line, the first load point the fleet DES cannot run (over a cap, or a
    window too short to measure); the points' labels as refusals name them."""
    labels = [f"{spec_text} at {load_point(point).label}" for point in points]
    for point, label in zip(points, labels, strict=True):
        check_fleet(label, point, transport)
    return labels
