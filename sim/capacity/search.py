"""The capacity search: the analytic model brackets, DES probes near it decide.

The analytic estimate (``sim.capacity.estimate``) gives the first load
to probe.  A probe runs replications in batches (in parallel on an executor)
and stops as soon as every SLO's 95% interval lies on one side of its limit,
or at ``load.replications`` rounded up to a full batch.  After each probe the
estimate is corrected by what the probe measured and the next load is its
capacity, until a load that meets the SLOs (by their point estimates) sits
within the resolution (5% by default, at least one agent) of one that misses:
that load is the capacity.  It then goes on outward until one probe below is met and one
above is missed with 95% confidence: those bound the capacity's interval.
Probes are kept, so none is simulated twice; replication ``r`` of every probe
uses the same random streams (common random numbers across loads).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass

from models.errors import ScenarioError
from models.scenario import Scenario
from sim.analysis.estimates import check_rollout_length
from sim.analysis.fleet_need import check_fleet
from sim.analysis.fleet_summary import run_fleet
from sim.capacity.estimate import SloEstimate
from sim.capacity.objectives import (
    CapacityResult,
    Evaluation,
    Slo,
    Verdict,
    evaluation,
    with_agents,
)
from sim.des.replication import Replication
from sim.turn.transports import Transport

PROBES_PER_SIDE = 8
"""Probes beyond the bracket, each way, looking for a load decided at 95%."""


@dataclass(frozen=True)
class SearchProgress:
    """Where one transport's search is: for a progress bar."""

    transport: Transport
    probes: int
    agents: int
    bracket: tuple[int, int | None]
    replications_done: int
    replications_planned: int
    finished: Evaluation | None = None
    """The probe just decided, if this report ends one."""


Report = Callable[[SearchProgress], None]


class _Search:
    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        slos: list[Slo],
        max_agents: int,
        tolerance: float,
        executor: Executor | None,
        batch: int,
        report: Report | None,
    ) -> None:
        self.scenario, self.transport, self.slos = scenario, transport, slos
        self.max_agents, self.tolerance = max_agents, tolerance
        self.executor, self.report = executor, report
        self.batch = max(batch, 1)
        self.cap = self.batch * math.ceil(max(scenario.load.replications, 2) / self.batch)
        self.runs: dict[int, list[Replication]] = {}
        self.evaluations: dict[int, Evaluation] = {}
        self.bracket: tuple[int, int | None] = (0, None)
        self.replications_done = 0

    def up(self, n: int) -> int:
        return min(self.max_agents, n + max(1, int(self.tolerance * n)))

    def down(self, n: int) -> int:
        m = max(1, int(n / (1 + self.tolerance)))
        while m < n - 1 and self.up(m) < n:
            m += 1
        return min(m, n - 1)

    def probe(self, agents: int) -> Evaluation:
        """Replications of ``agents`` agents until the SLOs are decided at 95% or the cap."""
        if agents in self.evaluations:
            return self.evaluations[agents]
        scenario = with_agents(self.scenario, agents)
        check_fleet(f"capacity probe of {agents:,} agents", scenario, self.transport)
        runs = self.runs.setdefault(agents, [])
        while True:
            size = max(2 - len(runs), min(self.batch, self.cap - len(runs)))
            indices = range(len(runs), len(runs) + size)
            runs.extend(
                run_fleet(scenario, self.transport, executor=self.executor, indices=indices)
            )
            self.replications_done += size
            result = evaluation(agents, runs, self.slos)
            decided = result.verdict is not Verdict.UNDECIDED or len(runs) >= self.cap
            if decided:
                self.evaluations[agents] = result
            self._tell(agents, result if decided else None)
            if decided:
                return result

    def _tell(self, agents: int, finished: Evaluation | None = None) -> None:
        if self.report is None:
            return
        low, high = self.bracket
        still = 3 if high is None or low == 0 else 2
        self.report(
            SearchProgress(
                self.transport,
                len(self.runs),
                agents,
                self.bracket,
                self.replications_done,
                self.replications_done + still * self.cap,
                finished,
            )
        )

    def run(self, estimate: SloEstimate) -> CapacityResult:
        guess = estimate.capacity(self.slos, self.max_agents)
        low, high = self._bracket(estimate, min(max(guess, 1), self.max_agents))
        met = self._confident(low, Verdict.MET, self.down, stop=1) if low else None
        lower = 0 if met is None else met
        upper = None
        if high is not None:
            upper = self._confident(high, Verdict.MISSED, self.up, stop=self.max_agents)
        return CapacityResult(
            transport=self.transport,
            capacity_agents=low,
            first_failing_agents=high,
            ci95_agents=(lower, None if upper is None else upper - 1),
            evaluations=tuple(self.evaluations[a] for a in sorted(self.evaluations)),
            analytic_estimate_agents=guess,
            saturation_agents=estimate.saturation_agents,
        )

    def _bracket(self, estimate: SloEstimate, n: int) -> tuple[int, int | None]:
        """Probe until a load that meets the SLOs sits next to one that misses them: each
        next load is the analytic capacity corrected by the last probe, kept at least one
        grid step inside what is known."""
        low, high = 0, None
        while True:
            result = self.probe(n)
            if result.meets:
                low = max(low, n)
            else:
                high = n if high is None else min(high, n)
            self.bracket = (low, high)
            if high is None and low >= self.max_agents:
                return low, None
            if high is not None and (high == 1 or (low > 0 and high <= self.up(low))):
                return low, high
            offsets = {
                metric: check.value_s - estimate.value(slo, n)
                for slo in self.slos
                for metric, check in result.checks.items()
                if metric is slo.metric
            }
            target = estimate.capacity(self.slos, self.max_agents, offsets)
            if high is None:
                n = max(self.up(low), min(target, self.max_agents))
            elif low == 0:
                n = max(1, min(self.down(high), target))
            else:
                first, last = self.up(low), self.down(high)
                n = min(max(target, first), max(last, first))

    def _confident(
        self, start: int, verdict: Verdict, step: Callable[[int], int], stop: int
    ) -> int | None:
        """The load nearest ``start`` (going with ``step``) decided ``verdict`` at 95% (None:
        none within the probes)."""
        n = start
        for _ in range(PROBES_PER_SIDE + 1):
            if self.probe(n).verdict is verdict:
                return n
            if n == stop:
                break
            n = step(n)
        return None


def search(
    scenario: Scenario,
    transport: Transport,
    slos: list[Slo],
    max_agents: int = 100_000,
    tolerance: float = 0.05,
    executor: Executor | None = None,
    batch: int = 1,
    report: Report | None = None,
) -> CapacityResult:
    """The largest closed population meeting every SLO under ``transport``.

    Replications run on ``executor`` (None: here, one after another), ``batch``
    at a time; ``report`` is told after every batch.  The command line, the API and the
    dashboard all come here, so the bound and the rollout length are checked for each.
    """
    if max_agents < 1:
        raise ScenarioError(f"max_agents = {max_agents}: must be an integer >= 1")
    check_rollout_length(f"{scenario.name}:{transport.value}", scenario)
    estimate = SloEstimate(scenario, transport)
    runner = _Search(scenario, transport, slos, max_agents, tolerance, executor, batch, report)
    return runner.run(estimate)


def search_all(
    scenario: Scenario,
    transports: tuple[Transport, ...],
    slos: list[Slo],
    max_agents: int = 100_000,
    executor: Executor | None = None,
    batch: int = 1,
    report: Report | None = None,
) -> dict[Transport, CapacityResult]:
    """One search per transport, at the same time, sharing ``executor`` (its workers stay
    busy while one search waits on a single replication)."""
    with ThreadPoolExecutor(len(transports)) as threads:
        futures = {
            t: threads.submit(search, scenario, t, slos, max_agents, 0.05, executor, batch, report)
            for t in transports
        }
        return {t: future.result() for t, future in futures.items()}
