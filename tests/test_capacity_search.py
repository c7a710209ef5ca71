"""The capacity search against an exhaustive scan, and the analytic estimate it starts from.

The tiny fleet (``tests/data/tiny-fleet.toml``: five-turn rollouts, pools of one or two
servers) with 4 replications a load, probed two at a time: the search stops a probe after
two replications when every interval is on one side of its limit.  The scan simulates
every population from 1 to past the answer with all 4 replications (the same random
streams), and its answer, the largest population whose mean meets the SLO with the next
one missing, is the search's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from models.loading import load_scenario
from sim.analysis.fleet_summary import run_fleet
from sim.analytic.agent.engine import expect
from sim.capacity.estimate import SloEstimate
from sim.capacity.objectives import Slo, SloMetric, evaluation, with_agents
from sim.capacity.search import search
from sim.turn.transports import Transport

TINY = str(Path(__file__).parent / "data" / "tiny-fleet.toml")
REPLICATIONS = 4


@cache
def tiny():
    return load_scenario(TINY, [f"load.replications={REPLICATIONS}"])


def slo_for(transport: Transport) -> list[Slo]:
    return [Slo(SloMetric.TTFT_MEAN_S, 2.5 * expect(tiny(), transport).ttft_mean_s)]


@pytest.mark.slow
@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_the_search_finds_what_an_exhaustive_scan_finds(transport: Transport) -> None:
    s, slos = tiny(), slo_for(transport)
    found = search(s, transport, slos, max_agents=200, batch=2)
    scan = {}
    for agents in range(1, found.capacity_agents + 4):
        runs = run_fleet(with_agents(s, agents), transport, indices=range(REPLICATIONS))
        scan[agents] = evaluation(agents, runs, slos).meets
    answer = max(n for n in scan if scan[n] and not scan.get(n + 1, True))
    assert found.capacity_agents == answer
    assert found.first_failing_agents == answer + 1
    assert any(e.replications < REPLICATIONS for e in found.evaluations), "a probe stopped early"
    assert len(found.evaluations) < len(scan)


def test_the_analytic_estimate_starts_the_search_near_the_answer() -> None:
    """On codex-spark over HTTP (the README's SLOs, where safety saturates first), the
    estimate is within 10% of the capacity docs/load.md measures with the DES (172-180)."""
    s = load_scenario("codex-spark", ["load.duration_s=120"])
    slos = [Slo(SloMetric.TTFT_P95_S, 1.0), Slo(SloMetric.E2E_P95_S, 40.0)]
    estimate = SloEstimate(s, Transport.HTTP)
    assert 160 <= estimate.capacity(slos, 100_000) <= 195
    assert estimate.capacity(slos, 50) == 50
