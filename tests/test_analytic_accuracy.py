"""The analytic fleet against DES reference runs: KV residency under memory pressure, every
routing and eviction, the fleet near and past its knee, rate limits for small populations.

The DES side is stored in ``tests/data/des_reference.json``, written by
``docs/scripts/des_reference.py`` (minutes of fleet simulation); the analytic side
is computed here.  ``test_the_stored_reference_is_the_des_of_today`` runs one
replication again, so a change to the DES that leaves the file stale fails.
"""

from __future__ import annotations

import pytest

from docs.scripts.accuracy import HIT_RATE_TOLERANCE, analytic, cases, interval
from docs.scripts.accuracy import refused_s_per_turn as analytic_refused_s_per_turn
from docs.scripts.accuracy_one_agent import ONE_AGENT, ONE_AGENT_TOLERANCE, one_agent
from docs.scripts.des_reference import Case, load, measure
from models.loading import load_scenario
from sim.analysis.fleet_analytic import analytic_points
from sim.analytic.fleet.approximations import (
    E2E_BOUND,
    HIT_RATE_BOUND,
    RATE_LIMIT_BOUND,
    RESIDENCY_E2E_BOUND,
    FleetApproximation,
)
from sim.analytic.fleet.demand import fleet_demand
from sim.analytic.fleet.network import closed_curve
from sim.capacity.estimate import SloEstimate
from sim.capacity.objectives import Slo, SloMetric, with_agents
from sim.turn.transports import Transport

RESIDENCY = [case["name"] for case in cases("residency")]
KNEE = [case["name"] for case in cases("knee")]
RATE_LIMIT = [case["name"] for case in cases("rate-limit")]
AFFINITY = [case["name"] for case in cases("affinity")]


def test_the_reference_holds_every_case_of_the_audit() -> None:
    """The audit's cases are all there: ttl-pin at 20 GB, the partial hits of every
    policy that does not follow the session, memory from 5 to 120 GB, the knee from 0.5 to
    1.5 times saturation, one agent at 60 requests a minute."""
    names = set(load())
    assert {"ttl-pin affinity 20 GB", "lru affinity 5 GB", "lru affinity 120 GB"} <= names
    for policy in ("round-robin", "random", "least-loaded"):
        assert f"lru {policy} 120 GB" in names
    assert {"classifiers 0.5 N*", "classifiers 1 N*", "classifiers 1.5 N*"} <= names
    assert "1 agents, 60 requests/min, ws" in names


@pytest.mark.slow
@pytest.mark.parametrize("label", ONE_AGENT)
def test_one_agents_hit_rate_is_the_des_within_its_flags_bound(label: str) -> None:
    """One agent, every routing, LRU and ttl-pin under memory pressure: the analytic hit
    rate within 1.5 points of 4,000 simulated rollouts' (whose 95% interval is narrower),
    the bound its ``prefix_residency`` flag states."""
    des, half, analytic_rate = one_agent(label)
    assert half < ONE_AGENT_TOLERANCE
    assert abs(analytic_rate - des) <= ONE_AGENT_TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("name", RESIDENCY)
def test_the_fleets_hit_rate_is_within_its_flags_bound(name: str) -> None:
    """200 WebSocket agents: the analytic hit rate and mean e2e within the bounds its flag
    states, the DES's 95% interval of the hit rate narrower than 2 points."""
    mean, half = interval(load()[name]["values"]["hit_rate"])
    assert half < HIT_RATE_TOLERANCE
    assert abs(analytic(name).prefix_cache_hit_rate - mean) <= HIT_RATE_BOUND
    mean, _ = interval(load()[name]["values"]["e2e_s"])
    assert abs(analytic(name).e2e_s.mean / mean - 1) <= RESIDENCY_E2E_BOUND


@pytest.mark.slow
@pytest.mark.parametrize("name", RESIDENCY)
def test_the_fleets_hit_rate_is_within_two_points_of_the_des(name: str) -> None:
    """The audit's cases (ttl-pin at 20 GB, the partial hits of round-robin, random and
    least-loaded, LRU affinity from 5 to 120 GB) and every variation (ttl-pin from 10 to
    120 GB in the DES's steady state): within 2 points."""
    mean, _ = interval(load()[name]["values"]["hit_rate"])
    assert abs(analytic(name).prefix_cache_hit_rate - mean) <= HIT_RATE_TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("name", AFFINITY)
def test_each_policys_hits_and_waits_at_its_replicas_follow_the_des(name: str) -> None:
    """An inference bottleneck of 4 replicas queueing on their own: each policy's hit rate
    and its mean e2e (its hits against its replicas' waits) within the bounds its flags
    state."""
    values = load()[name]["values"]
    result = analytic(name)
    mean, _ = interval(values["hit_rate"])
    assert abs(result.prefix_cache_hit_rate - mean) <= HIT_RATE_BOUND
    mean, _ = interval(values["e2e_s"])
    assert abs(result.e2e_s.mean / mean - 1) <= RESIDENCY_E2E_BOUND


@pytest.mark.parametrize("name", KNEE)
def test_the_fleet_near_and_past_its_knee_is_within_its_flags_bound(name: str) -> None:
    """Mean end-to-end time from 0.5 to 1.5 times the saturation population within the
    bound the ``fleet_queueing`` flag states, the DES's interval narrower than that."""
    mean, half = interval(load()[name]["values"]["e2e_s"])
    assert abs(analytic(name).e2e_s.mean / mean - 1) <= E2E_BOUND
    assert half <= E2E_BOUND * mean


@pytest.mark.parametrize("name", KNEE)
def test_the_fleet_near_and_past_its_knee_is_inside_the_des_interval(name: str) -> None:
    """Inside the DES's 95% interval across its six replications."""
    mean, half = interval(load()[name]["values"]["e2e_s"])
    assert abs(analytic(name).e2e_s.mean - mean) <= half


@pytest.mark.slow
@pytest.mark.parametrize("name", RATE_LIMIT)
def test_rate_limited_small_populations_are_inside_the_des_interval(name: str) -> None:
    """A lone agent cannot bank refill while away, and a refused request comes back a round
    trip after the refill, its upload after its admission: e2e and the time refused per
    turn inside the DES's intervals at 1, 2, 5, 10 and 40 agents."""
    values = load()[name]["values"]
    result = analytic(name)
    mean, half = interval(values["e2e_s"])
    assert abs(result.e2e_s.mean - mean) <= half
    assert abs(result.e2e_s.mean / mean - 1) <= RATE_LIMIT_BOUND
    mean, half = interval(values["refused_s_per_turn"])
    assert abs(analytic_refused_s_per_turn(result) - mean) <= half


def test_a_fleet_result_names_each_approximation_with_its_bound() -> None:
    """The analytic fleet's results are flagged: the queueing network always, residency and
    the replicas' own queues where they apply, each flag with the bound measured here."""
    flags = analytic("lru affinity 120 GB").approximations
    bound = f"{FleetApproximation.FLEET_RESIDENCY} (hit rate within 2.0 points of the DES"
    assert any(flag.startswith(bound) for flag in flags)
    assert any(flag.startswith(f"{FleetApproximation.REPLICA_QUEUES} (") for flag in flags)
    assert any(flag.startswith(f"{FleetApproximation.FLEET_QUEUEING} (") for flag in flags)
    assert "prefix_residency" not in flags
    limited = analytic("1 agents, 60 requests/min, ws").approximations
    assert any(flag.startswith(f"{FleetApproximation.RATE_LIMIT} (") for flag in limited)
    assert not any(flag.startswith(f"{FleetApproximation.FLEET_RESIDENCY}") for flag in limited)


@pytest.mark.slow
def test_the_stored_reference_is_the_des_of_today() -> None:
    """Replication 0 of the cheapest stored case, run again, gives the stored numbers bit for
    bit (rerun ``docs/scripts/des_reference.py`` after changing the DES)."""
    stored = load()["2 agents, 60 requests/min, ws"]
    fields = {k: v for k, v in stored.items() if k != "values"}
    case = Case(**{**fields, "overrides": tuple(fields["overrides"])})
    again = measure(case, 0)
    assert {key: values[0] for key, values in stored["values"].items()} == again


@pytest.mark.slow
def test_the_capacity_estimate_solves_each_population_at_its_own_hit_rate() -> None:
    """With KV residency the estimate's mean e2e at each probed population is the analytic
    fleet's own point there (its hit rate a fixed point with its queueing), not the curve of
    one demand; the hit rate falls as more sessions share a replica's memory."""
    s = load_scenario("codex-spark", ["kv_cache.residency=true", "inference.kv_memory_bytes=2e10"])
    estimate = SloEstimate(s, Transport.WS)
    mean_e2e = Slo(SloMetric.E2E_MEAN_S, 40.0)
    one_demand = closed_curve(fleet_demand(s, Transport.WS), 400)
    rates = []
    for agents in (20, 400):
        (point,) = analytic_points("codex-spark", [with_agents(s, agents)], Transport.WS)
        assert estimate.value(mean_e2e, agents) == point.e2e_s.mean
        assert point.e2e_s.mean != one_demand[agents - 1].e2e_s
        rates.append(point.prefix_cache_hit_rate)
    assert rates[0] > rates[1] + 0.05
