"""A DES sweep's total work, added up point by point as its points are resolved.

Each point is within the caps of one run, but a million of them is centuries
of simulation: the sweep's simulated turns (every point, seed and transport)
are summed while the points are resolved, and the sweep is refused in one
line the moment the sum passes ``SWEEP_TURNS``, before anything is written.
"""

from __future__ import annotations

from models.errors import ScenarioError
from models.limits import SWEEP_TURNS
from models.loading import validate
from models.scenario import Scenario
from sim.analysis.estimates import DES_TURNS_PER_S, single_agent_need
from sim.analysis.fleet_need import fleet_need
from sim.sweep.sweepfile import Sweep

HOURS = 3600.0


class WorkTally:
    """The simulated turns of a DES sweep's points so far; over the cap is a one-line error.

    Before any point is resolved, the base point's turns times the points is checked too:
    a sweep whose points are all like its base is refused at once, not after minutes of
    resolving them.
    """

    def __init__(self, sweep: Sweep, source: str) -> None:
        self._sweep, self._source = sweep, source
        self._points = sweep.runs // len(sweep.seeds)
        self.turns, self.seen = 0.0, 0
        base = self._turns(validate(sweep.base_raw))
        self._check("about", base * self._points, f"{self._points:,} points like its base")

    def visit(self, scenario: Scenario) -> None:
        """Add one resolved point: every seed and transport of it."""
        self.turns += self._turns(scenario)
        self.seen += 1
        if self.seen == self._points:
            self._check("about", self.turns, f"{self._points:,} points")
        else:
            self._check(
                "at least", self.turns, f"the first {self.seen:,} of {self._points:,} points"
            )

    def _turns(self, scenario: Scenario) -> float:
        file = self._sweep.file
        turns = 0.0
        for transport in file.transports:
            if scenario.on_fleet:
                need = fleet_need(self._source, scenario, transport)
            else:
                need = single_agent_need(self._source, scenario, file.rollouts)
            turns += need.turns * len(self._sweep.seeds)
        return turns

    def _check(self, bound: str, turns: float, points: str) -> None:
        limit = SWEEP_TURNS.limit()
        if turns <= limit:
            return
        file = self._sweep.file
        hours = turns / DES_TURNS_PER_S / HOURS
        seeds, transports = len(self._sweep.seeds), len(file.transports)
        raise ScenarioError(
            f"{self._source}: {bound} {turns:,.3g} simulated turns ({points} x "
            f"{seeds} seed{'s' * (seeds > 1)} x {transports} transport{'s' * (transports > 1)}; "
            "roughly "
            f"{hours:,.0f} core-hours at {DES_TURNS_PER_S:,} turns/s) is over the "
            f"{SWEEP_TURNS.what} cap of {limit:,.3g} turns; sweep fewer points, seeds or "
            f"rollouts, or raise the cap with {SWEEP_TURNS.how_to_raise(turns)}"
        )
