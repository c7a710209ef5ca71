"""What a newcomer met on the command line and with sweeps, each fixed and kept fixed:
``show FILE``, adding one tool kind to a preset, overrides and the scenario hash in the
header and the JSON, analytic headers without rollouts or seed, the trace message,
analytic sweeps in process without Dask's port warning, results directories that read
as one Parquet dataset, ``plot --help``, and what "dominates" means."""

from __future__ import annotations

import json
import re
import socket
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from support import CliResult

from models.loading import load_scenario
from sim import api
from sim.analysis.results import Comparison, RunResult
from sim.analysis.verdict import verdict
from sim.sweep.execute import run_sweep
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep

Cli = Callable[..., CliResult]

MY_AGENT = """\
extends = "codex-spark"
name = "my-agent"

[network]
rtt_ms = 90.0
"""

BROWSER = """\
extends = "codex-spark"
name = "with-browser"

[[append.workload.tools]]
name = "browser"
weight = 0.1
time_s = { kind = "lognormal", median = 2.0, sigma = 0.5 }
output_tokens = { kind = "lognormal", median = 2000.0, sigma = 0.6 }
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_show_prints_a_scenario_file_as_written(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "my-agent.toml", MY_AGENT)
    result = cli("show", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == MY_AGENT


def test_an_appended_tool_kind_keeps_the_presets_tools(tmp_path: Path) -> None:
    preset = load_scenario("codex-spark").workload.tools
    tools = load_scenario(str(write(tmp_path, "browser.toml", BROWSER))).workload.tools
    assert [t.name for t in tools] == [*(t.name for t in preset), "browser"]
    assert tools[:-1] == preset


def test_appending_to_a_list_the_parent_does_not_have_is_one_line(cli: Cli, tmp_path) -> None:
    path = write(tmp_path, "bad.toml", 'extends = "codex-spark"\n[[append.workload.x]]\na = 1\n')
    result = cli("run", str(path))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "append.workload.x" in result.stderr


def test_analytic_header_and_json_name_no_rollouts_and_no_seed(cli: Cli) -> None:
    text = cli("run", "codex-spark:ws", "--engine", "analytic").stdout
    title = text.splitlines()[0]
    assert "rollouts" not in title and "seed" not in title
    data = json.loads(cli("run", "codex-spark:ws", "--engine", "analytic", "--json").stdout)
    assert data["rollouts"] is None and data["seed"] is None


def test_the_summary_line_separates_its_clauses(cli: Cli) -> None:
    lines = cli("run", "codex-spark:ws", "--engine", "analytic").stdout
    summary = " ".join(lines.split())
    assert re.search(r"e2e mean [\d.]+ s; TTFT mean \d+ ms; API work", summary), summary


def test_overrides_and_the_scenario_hash_are_in_the_header_and_the_json(cli: Cli) -> None:
    args = ("run", "codex-spark:ws", "--engine", "analytic", "--set", "network.rtt_ms=120")
    data = json.loads(cli(*args, "--json").stdout)
    assert data["overrides"] == ["network.rtt_ms=120"]
    plain = json.loads(cli(*args[:4], "--json").stdout)
    assert plain["overrides"] == [] and plain["scenario_hash"] != data["scenario_hash"]
    header = cli(*args).stdout
    assert data["scenario_hash"] in header and "--set network.rtt_ms=120" in header
    shown = cli("show", "codex-spark", "--resolved", "--set", "network.rtt_ms=120").stdout
    assert shown.splitlines()[0] == f"# scenario hash: {data['scenario_hash']} (seed aside)"


def test_load_points_record_the_overrides_in_the_json_and_the_api(cli: Cli) -> None:
    args = ("load", "codex-spark:ws", "--agents", "1,10", "--engine", "analytic")
    points = json.loads(cli(*args, "--set", "network.rtt_ms=120", "--json").stdout)["points"]
    assert [p["overrides"] for p in points] == [["network.rtt_ms=120"]] * 2
    plain = json.loads(cli(*args, "--json").stdout)["points"]
    assert [p["overrides"] for p in plain] == [[], []]
    curve = api.load_curve("codex-spark:ws", agents=[10], overrides={"network.rtt_ms": 120})
    assert [r.overrides for r in curve.points] == [("network.rtt_ms=120",)]


def test_the_same_scenario_by_file_or_by_override_has_one_hash(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "far.toml", 'extends = "codex-spark"\n[network]\nrtt_ms = 120.0\n')
    by_file = json.loads(cli("run", f"{path}:ws", "--engine", "analytic", "--json").stdout)
    overridden = ("run", "codex-spark:ws", "--engine", "analytic", "--set", "network.rtt_ms=120")
    by_set = json.loads(cli(*overridden, "--json").stdout)
    assert by_file["scenario_hash"] == by_set["scenario_hash"]


@pytest.mark.parametrize("command", ["run", "compare"])
def test_a_trace_says_where_it_was_written(cli: Cli, tmp_path: Path, command: str) -> None:
    path = tmp_path / "t.json"
    specs = ["codex-spark:http", "codex-spark:ws"][: 1 if command == "run" else 2]
    result = cli(command, *specs, "-n", "3", "--trace", str(path))
    assert result.exit_code == 0, result.stderr
    assert f"wrote {path}" in result.stderr and "perfetto" in result.stderr
    assert path.is_file()


def test_plot_help_shows_one_percent_sign(cli: Cli) -> None:
    text = cli("plot", "--help").stdout
    assert "95% bands" in text and "%%" not in text


def test_still_the_largest_share_when_the_stage_was_the_baselines_largest(cli: Cli) -> None:
    args = ("compare", "codex-spark:http", "codex-spark:http-full", "--engine", "analytic")
    data = json.loads(cli(*args, "--json").stdout)
    a, b = (data[side]["budget_share"] for side in "ab")
    assert max(a, key=a.get) == max(b, key=b.get) == "tool"
    assert b["tool"] < 0.5
    text = " ".join(cli(*args).stdout.split())
    assert "tool execution on the client is still the largest share of codex-spark:http-full" in (
        text
    )


@pytest.mark.parametrize(
    "tool_s, words",
    [
        (1.0, "tool execution on the client is now the largest share of b (42% of its time)"),
        (1.4, "tool execution on the client is now the largest share of b (50% of its time)"),
        (1.6, "tool execution on the client now dominates b (53% of its time)"),
    ],
)
def test_a_stage_dominates_only_above_half_of_the_time(tool_s: float, words: str) -> None:
    shares = {
        "a": {"safety": 2.0, "tool": 1.0},
        "b": {"safety": 0.5, "decode": 0.9, "tool": tool_s},
    }
    sides = [_result(name, budget) for name, budget in shares.items()]
    text = verdict(Comparison(sides[0], sides[1], _reduction()))
    assert words in text
    assert "the biggest saving is in safety classification (1.50 s per rollout)" in text


def test_sentences_use_stage_phrases_never_legend_labels() -> None:
    from models.stages import STAGES

    phrases = [stage.phrase for stage in STAGES]
    assert len(set(phrases)) == len(phrases)
    for stage in STAGES:
        assert ":" not in stage.phrase and stage.phrase == stage.phrase.lower(), stage
    shares = {"a": {"safety": 2.0, "tool": 1.0}, "b": {"safety": 0.5, "tool": 1.0}}
    sides = [_result(name, budget) for name, budget in shares.items()]
    text = verdict(Comparison(sides[0], sides[1], _reduction()))
    assert not [stage.label for stage in STAGES if stage.label in text]


def _result(name: str, budget: dict[str, float]) -> RunResult:
    from models.stages import STAGES
    from sim.analysis.results import Latency
    from sim.turn.transports import Transport

    seconds = {stage: budget.get(stage.value, 0.0) for stage in STAGES}
    e2e = Latency(sum(seconds.values()))
    return RunResult(
        name, name, Transport.HTTP, "analytic", None, None, e2e, e2e, seconds, 0, 0, 0, 0, 0, None
    )


def _reduction():
    from sim.analysis.metrics import Metric
    from sim.analysis.results import Estimate

    return {Metric.E2E_REDUCTION: Estimate(0.5)}


ANALYTIC_SWEEP = """\
name = "small"
base = "codex-spark"
transports = ["http", "ws"]
engine = "analytic"

[[axes]]
path = "network.rtt_ms"
values = [10.0, 30.0, 90.0]
"""

ONE_AT_A_TIME_DES = """\
name = "oat"
base = "codex-spark"
transports = ["http", "ws"]
engine = "des"
rollouts = 4
design = "one-at-a-time"

[[axes]]
path = "network.rtt_ms"
values = [10.0]

[[axes]]
path = "api.route_ms"
values = [50.0]
"""
"""Three parts, one per point; the base point's axis columns are all null."""

FAILING_DES = ONE_AT_A_TIME_DES.replace("values = [50.0]", "values = [2.0]")
"""api.route_ms = 2 fails (route_cached_ms is 3): one part holds only error rows, without
the result columns, which DuckDB then unites by name."""


def test_an_analytic_sweep_runs_in_process_without_dask(tmp_path: Path, monkeypatch) -> None:
    import dask.distributed

    def refuse(*args, **kwargs):
        raise AssertionError("an analytic sweep started a Dask cluster")

    monkeypatch.setattr(dask.distributed, "LocalCluster", refuse)
    sweep = load_sweep(write(tmp_path, "small.toml", ANALYTIC_SWEEP))
    outcome = run_sweep(sweep, tmp_path / "out")
    assert outcome.rows == 6


@pytest.mark.slow
def test_a_cluster_on_a_busy_port_8787_gives_no_warning(tmp_path: Path, cli: Cli) -> None:
    source = write(tmp_path, "small.toml", ANALYTIC_SWEEP)
    with socket.socket() as busy, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            busy.bind(("127.0.0.1", 8787))
            busy.listen()
        except OSError:
            pass  # taken already: the case to test
        result = cli("sweep", str(source), "--out", str(tmp_path / "o"), "--workers", "1")
    assert result.exit_code == 0, result.stderr
    said = result.stderr + "".join(str(w.message) for w in caught)
    assert "8787" not in said and "already in use" not in said


@pytest.mark.parametrize(
    ("text", "options"),
    [(ANALYTIC_SWEEP, ""), (ONE_AT_A_TIME_DES, ""), (FAILING_DES, ", union_by_name = true")],
    ids=["analytic", "des", "des-with-a-failed-point"],
)
def test_a_results_directory_reads_with_pandas_and_duckdb(
    tmp_path: Path, text: str, options: str
) -> None:
    out = tmp_path / "out"
    run_sweep(load_sweep(write(tmp_path, "s.toml", text)), out, workers=0)
    expected = read_results(out).to_pandas()
    by_pandas = pd.read_parquet(out)
    by_duckdb = duckdb.sql(f"select * from read_parquet('{out}/**/*.parquet'{options})").df()
    for frame in (by_pandas, by_duckdb):
        assert rows(frame, expected.columns) == rows(expected, expected.columns)


def rows(frame: pd.DataFrame, columns: pd.Index) -> list[dict]:
    """The rows in (point, transport, seed) order, missing values as None."""
    frame = frame.sort_values(["point", "transport", "seed"])[list(columns)].astype(object)
    return frame.where(frame.notna(), None).to_dict("records")


def test_a_results_directory_of_the_old_layout_reads_and_resumes(tmp_path: Path) -> None:
    source = write(tmp_path, "small.toml", ANALYTIC_SWEEP)
    out = tmp_path / "old"
    run_sweep(load_sweep(source), out, workers=0)
    expected = read_results(out)
    (out / "_manifest.json").rename(out / "manifest.json")
    (out / "_sweep.toml").rename(out / "sweep.toml")
    assert read_results(out).equals(expected)
    run_sweep(load_sweep(source), out, workers=0, resume=True)
    names = sorted(p.name for p in out.iterdir())
    assert names == [".lock", "_manifest.json", "_sweep.toml", "parts"]
    assert pd.read_parquet(out).shape[0] == expected.num_rows
