"""With capacity far above the load, the fleet reduces to the single-agent model.

Twenty closed-loop codex-spark agents share pools of a million workers and 64
replicas (so every stream decodes alone on its replica): nothing waits, and each
rollout is the single agent's rollout.  Replication 0 of the fleet draws the same
workload per rollout index as ``loopbudget run``, so with no random connection
faults every fleet rollout must equal one single-agent DES rollout exactly; and the
per-stage means of 2 replications (about 900 HTTP and 1,300 WebSocket rollouts)
must lie within 4 standard errors of the analytic expectation, as in
``test_analytic``.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from models.loading import load_scenario
from models.scenario import Scenario
from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analysis.fleet_summary import run_fleet
from sim.analytic.agent.engine import expect
from sim.des.replication import Replication
from sim.des.runners import simulate
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.records import RolloutRecords, concatenate
from sim.turn.transports import Transport

Z_TOLERANCE = 4.0
SLACK_S = 1e-9
AMPLE = (
    "load.agents=20",
    "load.warmup_s=60",
    "load.duration_s=600",
    "load.replications=2",
    "capacity.api_workers=1000000",
    "capacity.safety_workers=1000000",
    "capacity.state_store_slots=1000000",
    "capacity.inference_replicas=64",
)
"""20 agents; a pool never has more than 2 requests per agent (WebSocket post work
overlaps the next turn), far below every capacity; 64 replicas exceed 20 streams."""


@cache
def ample(transport: Transport, *overrides: str) -> tuple[Scenario, list[Replication]]:
    s = load_scenario("codex-spark", (*AMPLE, *overrides))
    return s, run_fleet(s, transport)


def standard_error(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) / np.sqrt(values.size)


def pooled(runs: list[Replication]) -> RolloutRecords:
    return concatenate([run.records for run in runs])


@pytest.mark.parametrize(
    ("transport", "overrides"),
    [(Transport.HTTP, ()), (Transport.WS, ("connection.ws_drops_per_hour=0",))],
    ids=["http", "ws-no-drops"],
)
def test_every_fleet_rollout_is_a_single_agent_rollout(
    transport: Transport, overrides: tuple[str, ...]
) -> None:
    """Each measured rollout of fleet replication 0 equals, stage by stage (rel 1e-9),
    a distinct rollout of the single-agent DES run on the same seed, and queues for 0 s.

    HTTP keep-alive and a drop-free WebSocket make connection state depend on the
    rollout's own timeline only, so the identity is exact, not statistical.
    """
    s, runs = ample(transport, *overrides)
    fleet = runs[0].records
    single = simulate(s, transport, 2 * BLOCK_ROLLOUTS)
    assert 0 < fleet.count < single.count
    assert np.all(fleet.stage_s[:, STAGE_COLUMN[Stage.QUEUE]] == 0)
    order = np.argsort(single.e2e_s)
    sorted_e2e = single.e2e_s[order]
    right = np.clip(np.searchsorted(sorted_e2e, fleet.e2e_s), 1, sorted_e2e.size - 1)
    left = right - 1
    nearer = np.where(
        np.abs(sorted_e2e[left] - fleet.e2e_s) <= np.abs(sorted_e2e[right] - fleet.e2e_s),
        left,
        right,
    )
    match = order[nearer]
    assert np.unique(match).size == fleet.count, "distinct single-agent rollouts"
    np.testing.assert_allclose(fleet.stage_s, single.stage_s[match], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fleet.e2e_s, single.e2e_s[match], rtol=1e-9)
    np.testing.assert_allclose(fleet.ttft_sum_s, single.ttft_sum_s[match], rtol=1e-9)
    np.testing.assert_allclose(fleet.api_cpu_s, single.api_cpu_s[match], rtol=1e-9)
    np.testing.assert_array_equal(fleet.cold_turns, single.cold_turns[match])


@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
def test_ample_capacity_means_match_the_analytic_single_agent_expectation(
    transport: Transport,
) -> None:
    """Per-stage means, e2e, API work and mean TTFT of the pooled replications lie
    within 4 standard errors of ``sim.analytic.expect`` (TTFT, a ratio of sums over
    rollouts, by the delta method); the queue stage is exactly 0 and no pool waits."""
    s, runs = ample(transport)
    records = pooled(runs)
    expected = expect(s, transport)
    assert records.count > 800
    for stage in STAGES:
        column = records.stage_s[:, STAGE_COLUMN[stage]]
        gap = abs(column.mean() - expected.stage_s[STAGE_COLUMN[stage]])
        assert gap <= Z_TOLERANCE * standard_error(column) + SLACK_S, stage
    assert np.all(records.stage_s[:, STAGE_COLUMN[Stage.QUEUE]] == 0)
    assert all(wait == 0 for run in runs for wait in run.wait_s_by_pool.values())
    for measured, mean in (
        (records.e2e_s, expected.e2e_s),
        (records.api_cpu_s, expected.api_cpu_s),
    ):
        assert abs(measured.mean() - mean) <= Z_TOLERANCE * standard_error(measured)
    ttft_s = records.ttft_sum_s.sum() / records.turns.sum()
    influence = (records.ttft_sum_s - ttft_s * records.turns) / records.turns.mean()
    assert abs(ttft_s - expected.ttft_mean_s) <= Z_TOLERANCE * standard_error(influence)


def test_ample_capacity_keeps_every_pool_nearly_idle() -> None:
    """Utilization of each pool is at most (requests per agent at once) x agents /
    capacity: 2 x 20 / 1,000,000 for the big pools, 20 / (64 x 16) for inference."""
    s, runs = ample(Transport.WS)
    agents = s.load.agents
    for run in runs:
        assert run.pools["api"].utilization <= 2 * agents / s.capacity.api_workers
        assert run.pools["safety"].utilization <= agents / s.capacity.safety_workers
        assert run.pools["inference"].utilization <= agents / s.capacity.inference_slots
        assert run.pools["inference"].mean_waiting == 0
