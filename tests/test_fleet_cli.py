"""``loopbudget load`` and ``loopbudget capacity``: bad input is one line with exit code 2,
an overloaded point prints UNSTABLE instead of means, and the capacity search returns
a load that meets the SLO next to one that misses it.

Simulations here use ``tests/data/tiny-fleet.toml`` (five-turn rollouts, pools of one
or two workers, 2 replications of a 120 s window) or codex-spark with short windows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CliResult, assert_one_line_error

from models.loading import load_scenario
from models.stages import POOLS
from sim.analysis.fleet_summary import run_fleet
from sim.analytic.agent.engine import expect
from sim.analytic.fleet.demand import fleet_demand
from sim.analytic.fleet.network import closed_curve
from sim.capacity.objectives import SLO_METRICS, Slo, SloMetric, evaluation, with_agents
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
TINY = str(Path(__file__).parent / "data" / "tiny-fleet.toml")


LOAD = ("load", "codex-spark")
BAD_INPUT = {
    "zero api workers": (
        [*LOAD, "--agents", "2", "--set", "capacity.api_workers=0"],
        ["capacity.api_workers", "= 0", "greater than or equal to 1"],
    ),
    "negative safety workers": (
        [*LOAD, "--agents", "2", "--set", "capacity.safety_workers=-3"],
        ["capacity.safety_workers", "= -3", "greater than or equal to 1"],
    ),
    "zero state-store slots": (
        [*LOAD, "--agents", "2", "--set", "capacity.state_store_slots=0"],
        ["capacity.state_store_slots", "= 0", "greater than or equal to 1"],
    ),
    "zero replicas": (
        [*LOAD, "--agents", "2", "--set", "capacity.inference_replicas=0"],
        ["capacity.inference_replicas", "= 0", "greater than or equal to 1"],
    ),
    "zero streams per replica": (
        [*LOAD, "--agents", "2", "--set", "capacity.streams_per_replica=0"],
        ["capacity.streams_per_replica", "= 0", "greater than or equal to 1"],
    ),
    "negative batching slowdown": (
        [*LOAD, "--agents", "2", "--set", "capacity.decode_slowdown_per_stream=-0.1"],
        ["capacity.decode_slowdown_per_stream", "-0.1", "greater than or equal to 0"],
    ),
    "zero rate": ([*LOAD, "--rates", "0"], ["--rates", "'0'", "numbers > 0"]),
    "negative rate": ([*LOAD, "--rates", "-1"], ["--rates", "'-1'", "numbers > 0"]),
    "one bad rate among good ones": ([*LOAD, "--rates", "1,-2"], ["--rates", "'1,-2'"]),
    "rate not a number": ([*LOAD, "--rates", "fast"], ["--rates", "'fast'", "numbers > 0"]),
    "negative rate in the scenario": (
        [*LOAD, "--rates", "1", "--set", "load.rollouts_per_s=-1"],
        ["load.rollouts_per_s", "= -1", "greater than 0"],
    ),
    "zero agents": ([*LOAD, "--agents", "0"], ["--agents", "'0'", "integers >= 1"]),
    "fractional agents": ([*LOAD, "--agents", "2.5"], ["--agents", "'2.5'", "integers >= 1"]),
    "zero agents in the scenario": (
        [*LOAD, "--agents", "2", "--set", "load.agents=0"],
        ["load.agents", "= 0", "greater than or equal to 1"],
    ),
    "empty load list": ([*LOAD, "--agents", ""], ["--agents", "''", "comma-separated"]),
    "load list of commas": ([*LOAD, "--agents", ","], ["--agents", "','", "comma-separated"]),
    "empty rate list": ([*LOAD, "--rates", " , "], ["--rates", "' , '", "comma-separated"]),
    "both load kinds": (
        [*LOAD, "--agents", "2", "--rates", "1"],
        ["--agents", "--rates", "exactly one"],
    ),
    "no load points": ([*LOAD], ["--agents", "--rates", "exactly one"]),
    "zero workers": ([*LOAD, "--agents", "2", "--workers", "0"], ["--workers", "= 0", ">= 1"]),
    "unknown engine": ([*LOAD, "--agents", "2", "--engine", "fast"], ["engine", "'fast'", "des"]),
    "zero window": (
        [*LOAD, "--agents", "2", "--set", "load.duration_s=0"],
        ["load.duration_s", "= 0", "greater than 0"],
    ),
    "one replication": (
        [*LOAD, "--agents", "2", "--set", "load.replications=1"],
        ["load.replications", "= 1", "greater than or equal to 2"],
    ),
    "unknown SLO metric": (
        ["capacity", "codex-spark", "--slo", "foo=1"],
        ["--slo", "'foo'", "unknown SLO metric", *SLO_METRICS],
    ),
    "SLO without a limit": (
        ["capacity", "codex-spark", "--slo", "ttft_p95_s"],
        ["--slo", "'ttft_p95_s'"],
    ),
    "zero SLO limit": (
        ["capacity", "codex-spark", "--slo", "ttft_p95_s=0"],
        ["--slo ttft_p95_s", "'0'", "> 0"],
    ),
    "SLO limit not a number": (
        ["capacity", "codex-spark", "--slo", "e2e_mean_s=soon"],
        ["--slo e2e_mean_s", "'soon'", "> 0"],
    ),
    "no SLO": (["capacity", "codex-spark"], ["--slo"]),
    "zero max agents": (
        ["capacity", "codex-spark", "--slo", "ttft_p95_s=1", "--max-agents", "0"],
        ["--max-agents", "0", ">= 1"],
    ),
    "zero capacity in a capacity search": (
        ["capacity", "codex-spark", "--slo", "ttft_p95_s=1", "--set", "capacity.api_workers=0"],
        ["capacity.api_workers", "= 0", "greater than or equal to 1"],
    ),
}


@pytest.mark.parametrize(("args", "mentions"), BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_load_input_is_one_line_and_exit_code_2(
    cli: Cli, args: list[str], mentions: list[str]
) -> None:
    """Zero or negative capacities and rates, empty load lists, both or neither kind of
    load, unknown SLO metrics and bad limits: one line naming field, value and rule."""
    assert_one_line_error(cli(*args), *mentions)


OVERLOADED = (
    "--rates",
    "0.05,0.5",
    "--set",
    "capacity.safety_workers=1",
    "--set",
    "load.warmup_s=0",
    "--set",
    "load.duration_s=200",
    "--set",
    "load.replications=2",
)
"""One safety worker completes at most ~0.21 codex-spark rollouts/s (see
``test_fleet_saturation``): 0.05/s is stable, 0.5/s is not."""


def test_load_prints_unstable_and_no_mean_past_capacity(cli: Cli) -> None:
    """The overloaded point's row says UNSTABLE with no numbers, a note names the pool
    and its offered load, and the stable point's row still has its latencies."""
    result = cli("load", "codex-spark", *OVERLOADED)
    assert result.exit_code == 0, result
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    unstable, stable = rows["0.5"], rows["0.05"]
    assert "UNSTABLE" in unstable
    assert not re.search(r"\d", unstable.replace("0.5", "", 1)), unstable
    assert "UNSTABLE" not in stable
    assert re.search(r"\d+\.\d±\d+\.\d\s+\d+\.\d", stable), "e2e mean±h and p95"
    assert max(len(line) for line in result.stdout.splitlines()) <= 100
    text = " ".join(result.stdout.split())
    assert "UNSTABLE at 0.5 rollouts/s: offered load on the safety pool" in text
    assert "grows without bound" in text


def test_load_json_of_closed_points_has_latency_throughput_and_utilization(cli: Cli) -> None:
    """``load --agents 2,4 --json``: one point per load with e2e and TTFT mean and
    percentiles (ordered), throughput, utilization of every pool in [0, 1], the CI
    method, and the same bytes again for the same seed."""
    args = ("load", TINY, "--agents", "2,4", "--json")
    first = cli(*args)
    assert first.exit_code == 0, first
    assert cli(*args).stdout == first.stdout
    result = json.loads(first.stdout)
    assert [p["load"]["agents"] for p in result["points"]] == [2, 4]
    for point in result["points"]:
        assert point["stable"] and point["replications"] == 2
        assert "replications" in point["ci_method"]
        for metric in ("e2e_s", "ttft_s"):
            latency = point[metric]
            assert 0 < latency["p50"] <= latency["p95"] <= latency["p99"]
            low, high = latency["ci95"]
            assert low <= latency["mean"] <= high
        assert point["throughput"]["turns_per_s"]["mean"] > 0
        assert set(point["utilization"]) == set(POOLS)
        assert all(0 <= u["mean"] <= 1 for u in point["utilization"].values())


@pytest.mark.slow
def test_capacity_answers_with_a_point_estimate_its_interval_and_its_probes(cli: Cli) -> None:
    """On the tiny fleet with a TTFT-mean SLO of twice the single-agent HTTP TTFT: for
    each transport the load at capacity meets the limit and the first failing load,
    within the 5% resolution (or one agent), misses it; the 95% interval holds the
    capacity and its ends are probes decided at 95%; the at-capacity values are what a
    fresh simulation of that load with the same replications gives; the ratio is
    ws / http, and the text says the same in one statement per transport."""
    s = load_scenario(TINY)
    limit_s = 2 * expect(s, Transport.HTTP).ttft_mean_s
    metric = "ttft_mean_s"
    args = ("capacity", TINY, "--slo", f"{metric}={limit_s}", "--workers", "1")
    result = cli(*args, "--json")
    assert result.exit_code == 0, result
    payload = json.loads(result.stdout)
    assert payload["engine"] == "des-fleet"
    found = payload["capacity"]
    for transport in (Transport.HTTP, Transport.WS):
        entry = found[transport.value]
        capacity, failing = entry["capacity_agents"], entry["first_failing_agents"]
        assert capacity >= 1 and failing is not None
        assert capacity < failing <= capacity + max(1, int(0.05 * capacity))
        by_agents = {e["agents"]: e for e in entry["evaluations"]}
        assert entry["probes"] == len(by_agents)
        assert entry["replications"] == sum(e["replications"] for e in by_agents.values())
        assert by_agents[capacity]["meets"] and not by_agents[failing]["meets"]
        assert entry["at_capacity"][metric]["value_s"] <= limit_s
        assert by_agents[failing]["slos"][metric]["value_s"] > limit_s
        low, high = entry["capacity_ci95_agents"]
        assert low <= capacity <= high
        assert by_agents[low]["verdict"] == "met with 95% confidence"
        assert by_agents[high + 1]["verdict"] == "missed with 95% confidence"
    http = found["http"]["capacity_agents"]
    at = found["http"]["evaluations"]
    used = next(e["replications"] for e in at if e["agents"] == http)
    fresh = evaluation(
        http,
        run_fleet(with_agents(s, http), Transport.HTTP, indices=range(used)),
        [Slo(SloMetric(metric), limit_s)],
    )
    assert fresh.checks[metric].value_s == found["http"]["at_capacity"][metric]["value_s"]
    assert payload["ws_over_http"] == pytest.approx(found["ws"]["capacity_agents"] / http)
    text = " ".join(cli(*args).stdout.split())
    assert f"http: capacity {http} agents (point estimate: {http} meet every SLO" in text
    low, high = found["http"]["capacity_ci95_agents"]
    assert f"with 95% confidence the capacity is between {low} and {high} agents" in text


def test_load_with_the_analytic_engine_is_the_queueing_model(cli: Cli) -> None:
    """``--engine analytic``: the same keys, the MVA's means (no percentiles, no intervals),
    an open point past the safety pool's capacity reported unstable; the table fits 100
    columns and says which engine made it."""
    closed = cli("load", "codex-spark:ws", "--agents", "100,900", "--engine", "analytic", "--json")
    assert closed.exit_code == 0, closed
    payload = json.loads(closed.stdout)
    assert payload["engine"] == "analytic-fleet"
    curve = closed_curve(fleet_demand(load_scenario("codex-spark"), Transport.WS), 900)
    for point in payload["points"]:
        expected = curve[point["load"]["agents"] - 1]
        assert point["e2e_s"]["mean"] == pytest.approx(expected.e2e_s, rel=1e-12)
        assert point["e2e_s"]["p95"] is None and point["e2e_s"]["ci95"] is None
        assert point["warmup_cut_s"] is None
        assert point["utilization"]["safety"]["mean"] == pytest.approx(
            expected.utilization["safety"], rel=1e-12
        )
    table = cli("load", "codex-spark:ws", "--rates", "10,60", "--engine", "analytic")
    assert table.exit_code == 0, table
    assert "analytic-fleet" in table.stdout and "UNSTABLE at 60 rollouts/s" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 100
