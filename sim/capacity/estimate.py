"""The analytic estimate of each SLO statistic against the number of agents.

Means come straight from the analytic fleet (``sim.analytic.fleet.network``).
Percentiles need a distribution, which the MVA does not give: they come from a
sample of uncontended rollouts (the single-agent DES, seconds per thousand
rollouts) shifted by the model's queueing at each load.  A rollout's
end-to-end time gains its turns times the mean path wait per turn and its
decode stretched by the batch (a sum of many waits varies little).  A turn's
TTFT gains a wait that is zero unless every server of the bottleneck is busy
(the model's probability) and otherwise the time for the ``q`` requests
waiting ahead and one in service to leave: a gamma distribution of shape
``1 + q`` with the model's mean.  That is the exponential wait of M/M/c when
the queue is short and an almost constant wait when a closed population stands
in a long queue past saturation (where an exponential would put the TTFT p95
of 1,500 WebSocket agents at 1.5 s against the 0.64 s the DES measures).

With KV residency the hit rate depends on the population (more sessions
share a replica's memory, and their waits lengthen the gaps an entry must
outlive), so each probed population is solved on its own: its hit rate and its
queueing as a fixed point (``sim.analytic.fleet.solve``), and the sample's
rollouts gain what that population's re-prefill adds to an uncontended one.

After a DES probe, the search corrects each estimate by what the probe
measured (``corrected``): the model's shape, the DES's level.
"""

from __future__ import annotations

import numpy as np

from models.scenario import Scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analysis.metrics import Metric
from sim.analytic.fleet.demand import FleetDemand, fleet_demand
from sim.analytic.fleet.network import closed_curve
from sim.analytic.fleet.point import FleetPoint
from sim.analytic.fleet.solve import solve
from sim.capacity.objectives import Slo, SloMetric, with_agents
from sim.des.runners import simulate
from sim.turn.transports import Transport

SAMPLE_ROLLOUTS = 2000
"""Uncontended rollouts behind the percentile estimates (a p99 from about 20 above it)."""


class SloEstimate:
    """SLO statistics of a closed population of any size, from the analytic fleet."""

    def __init__(self, scenario: Scenario, transport: Transport) -> None:
        self.demand = fleet_demand(scenario, transport)
        self._scenario, self._transport = scenario, transport
        self._resident: dict[int, tuple[FleetDemand, FleetPoint]] = {}
        records = simulate(scenario, transport, SAMPLE_ROLLOUTS)
        self._e2e_s = records.e2e_s
        self._turns = records.turns
        self._decode_s = records.stage_s[:, STAGE_COLUMN[Stage.DECODE]]
        self._ttft_s = records.turn_ttft_s
        self._seed = scenario.seed
        self._uniform = np.random.default_rng(self._seed).random(self._ttft_s.size)
        self._curve: list[FleetPoint] = []

    @property
    def saturation_agents(self) -> float:
        return self.demand.saturation_agents()

    def point(self, agents: int) -> FleetPoint:
        return self._solved(agents)[1]

    def _solved(self, agents: int) -> tuple[FleetDemand, FleetPoint]:
        """The demand (at the population's own hit rate, with KV residency) and the point."""
        if self._scenario.kv_cache.residency:
            if agents not in self._resident:
                scenario = with_agents(self._scenario, agents)
                self._resident[agents] = solve(scenario, self._transport)
            return self._resident[agents]
        if agents > len(self._curve):
            self._curve = closed_curve(self.demand, max(agents, 2 * len(self._curve)))
        return self.demand, self._curve[agents - 1]

    def value(self, slo: Slo, agents: int) -> float:
        """The estimate of ``slo``'s statistic at ``agents`` agents."""
        demand, p = self._solved(agents)
        percentile = slo.metric.statistic.percentile
        if slo.metric.quantity is Metric.E2E_S:
            if percentile is None:
                return p.e2e_s
            wait_per_turn_s = sum(p.path_wait_s.values()) / demand.turns
            stretch = p.decode_s / demand.decode_s - 1.0 if demand.decode_s else 0.0
            # What the population's misses add to an uncontended turn (nothing without
            # residency: the demand is the sample's).
            reprefill_per_turn_s = (demand.e2e_s - self.demand.e2e_s) / demand.turns
            per_turn_s = wait_per_turn_s + reprefill_per_turn_s
            shifted = self._e2e_s + self._decode_s * stretch + self._turns * per_turn_s
            return float(np.percentile(shifted, percentile))
        if percentile is None:
            return p.ttft_s
        mean_wait_s = p.ttft_s - demand.expectation.ttft_mean_s
        ttft_s = self._ttft_s
        if demand is not self.demand:
            ttft_s = ttft_s + demand.expectation.ttft_mean_s - self.demand.expectation.ttft_mean_s
        bottleneck = max(p.wait_probability, key=p.wait_probability.__getitem__)
        busy = p.wait_probability[bottleneck]
        if mean_wait_s <= 0 or busy <= 0:
            return float(np.percentile(ttft_s, percentile))
        shape = 1.0 + p.queue_length[bottleneck]
        gamma = np.random.default_rng(self._seed).standard_gamma(shape, self._ttft_s.size)
        waits = np.where(self._uniform < busy, gamma * mean_wait_s / (busy * shape), 0.0)
        return float(np.percentile(ttft_s + waits, percentile))

    def capacity(
        self, slos: list[Slo], max_agents: int, offsets_s: dict[SloMetric, float] | None = None
    ) -> int:
        """The largest population (at most ``max_agents``) whose estimates, plus
        ``offsets_s``, meet every SLO (0 if one agent already misses one); the estimates
        grow with the population."""
        offsets_s = offsets_s or {}

        def meets(agents: int) -> bool:
            return all(
                self.value(slo, agents) + offsets_s.get(slo.metric, 0.0) <= slo.limit_s
                for slo in slos
            )

        if not meets(1):
            return 0
        low, high = 1, max(2, int(2 * self.saturation_agents))
        while high < max_agents and meets(high):
            low, high = high, 2 * high
        high = min(high, max_agents)
        if meets(high):
            return high
        while high - low > 1:
            middle = (low + high) // 2
            if meets(middle):
                low = middle
            else:
                high = middle
        return low
