"""The command line: bad input gives one line and exit code 2; output is reproducible."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CliResult, assert_one_line_error, scenario

from models.loading import load_scenario, preset_names
from models.stages import STAGES
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
LOOPBUDGET = Path(sys.executable).with_name("loopbudget")
"""The installed console script, next to the interpreter running the tests."""

BAD_TOML = 'name = "broken"\n[workload\nseed = 3\n'


BAD_INPUT = {
    "unknown preset": (["run", "nope:http"], ["preset", "'nope'", "codex-spark"]),
    "unknown preset in compare": (
        ["compare", "codex-spark:http", "nope:ws"],
        ["preset", "'nope'", "codex-spark"],
    ),
    "unknown transport": (["run", "codex-spark:tcp"], ["transport", "'tcp'", "ws-append"]),
    "unknown field": (
        ["run", "codex-spark", "--set", "network.rtt=1"],
        ["network.rtt", "unknown field", "rtt_ms"],
    ),
    "unknown section": (["run", "codex-spark", "--set", "netwerk.rtt_ms=1"], ["netwerk"]),
    "unknown engine": (
        ["run", "codex-spark", "--engine", "fast"],
        ["engine", "'fast'", "analytic"],
    ),
    "wrong type": (
        ["run", "codex-spark", "--set", "network.rtt_ms=abc"],
        ["network.rtt_ms", "'abc'", "valid number"],
    ),
    "wrong boolean": (
        ["run", "codex-spark", "--set", "connection.store=maybe"],
        ["connection.store", "'maybe'", "boolean"],
    ),
    "zero rate": (
        ["run", "codex-spark", "--set", "inference.prefill_tps=0"],
        ["inference.prefill_tps", "= 0", "greater than or equal to 1"],
    ),
    "zero decode rate": (
        ["run", "codex-spark", "--set", "inference.decode_tps=0"],
        ["inference.decode_tps", "= 0", "away from zero"],
    ),
    "zero bandwidth": (
        ["run", "codex-spark", "--set", "network.uplink_bytes_per_s=0"],
        ["network.uplink_bytes_per_s", "= 0", "greater than or equal to 1"],
    ),
    "negative duration": (
        ["run", "codex-spark", "--set", "network.rtt_ms=-1"],
        ["network.rtt_ms", "= -1", "greater than or equal to 0"],
    ),
    "probability above one": (
        ["run", "codex-spark", "--set", "api.render_cache_hit_prob=1.5"],
        ["api.render_cache_hit_prob", "1.5", "less than or equal to 1"],
    ),
    "bad distribution": (
        [
            "run",
            "codex-spark",
            "--set",
            'inference.decode_tps={kind="uniform", low=5, high=1}',
        ],
        ["inference.decode_tps", "must be >= low"],
    ),
    "fractional tool calls": (
        ["run", "codex-spark", "--set", "workload.tool_calls_per_rollout=2.5"],
        ["workload.tool_calls_per_rollout", "2.5", "integer-valued"],
    ),
    "assignment without a value": (
        ["run", "codex-spark", "--set", "network.rtt_ms"],
        ["network.rtt_ms", "PATH=VALUE"],
    ),
    "unknown hardware": (
        ["run", "codex-spark", "--set", "inference.hardware=tpu-v9"],
        ["inference.hardware", "'tpu-v9'", "cerebras-class"],
    ),
    "missing file": (["run", "no/such/agent.toml:ws"], ["no/such/agent.toml", "no such file"]),
    "zero rollouts": (["run", "codex-spark", "--rollouts", "0"], ["rollouts", "0", ">= 1"]),
    "rollouts not a number": (["run", "codex-spark", "--rollouts", "many"], ["'many'"]),
    "unknown option": (["run", "codex-spark", "--bogus"], ["--bogus"]),
    "trace without a simulation": (
        ["run", "codex-spark", "--engine", "analytic", "--trace", "t.json"],
        ["--trace", "des"],
    ),
    "show an unknown preset": (["show", "nope"], ["'nope'", "codex-spark"]),
}


@pytest.mark.parametrize(("args", "mentions"), BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_is_one_line_and_exit_code_2(cli: Cli, args: list[str], mentions: list[str]):
    assert_one_line_error(cli(*args), *mentions)


def test_unparsable_toml_names_line_and_column(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(BAD_TOML)
    assert_one_line_error(cli("run", f"{path}:ws"), str(path), "line 2", "column")


def test_unknown_field_in_a_file_names_its_path(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('extends = "codex-spark"\n[api]\nrender_ms = 3.0\n')
    assert_one_line_error(cli("run", str(path)), "api.render_ms", "unknown field")


@pytest.mark.slow
def test_installed_script_reports_bad_input_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(BAD_TOML)
    done = subprocess.run([LOOPBUDGET, "run", str(path)], capture_output=True, text=True)
    assert_one_line_error(CliResult(done.returncode, done.stdout, done.stderr), "line 2")


def run_json(*args: str) -> bytes:
    """``loopbudget ... --json`` in a fresh process: its stdout, byte for byte."""
    done = subprocess.run([LOOPBUDGET, *args, "--json"], capture_output=True, check=True)
    return done.stdout


SEEDED = ("compare", "codex-spark:http", "codex-spark:ws", "--rollouts", "60", "--seed", "11")


@pytest.mark.slow
def test_same_seed_same_json_across_processes() -> None:
    assert run_json(*SEEDED) == run_json(*SEEDED)


def test_same_seed_same_json_in_process_and_another_seed_differs(cli: Cli) -> None:
    first, again = cli(*SEEDED, "--json").stdout, cli(*SEEDED, "--json").stdout
    assert first == again
    other = json.loads(cli(*SEEDED[:-1], "12", "--json").stdout)
    seeded = json.loads(first)
    assert other["a"]["seed"] == 12 and seeded["a"]["seed"] == 11
    assert other["a"]["e2e_s"]["mean"] != seeded["a"]["e2e_s"]["mean"]
    assert other["b"]["ttft_s"]["p95"] != seeded["b"]["ttft_s"]["p95"]
    assert other["e2e_reduction"] != seeded["e2e_reduction"]


def test_run_json_has_the_documented_keys(cli: Cli) -> None:
    result = cli("run", "codex-spark:ws", "--rollouts", "40", "--json")
    assert result.exit_code == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["spec"] == "codex-spark:ws"
    assert run["scenario"] == "codex-spark"
    assert run["transport"] == "ws"
    assert run["seed"] == scenario("codex-spark").seed
    assert run["rollouts"] == 40
    for key in ("e2e_s", "ttft_s"):
        stats = run[key]
        assert set(stats) >= {"mean", "p50", "p95", "p99", "ci95"}
        low, high = stats["ci95"]
        assert low < stats["mean"] < high
        assert stats["p50"] <= stats["p95"] <= stats["p99"]
    assert list(run["budget_s"]) == [stage.value for stage in STAGES]
    assert sum(run["budget_s"].values()) == pytest.approx(run["e2e_s"]["mean"], rel=1e-9)
    assert sum(run["budget_share"].values()) == pytest.approx(1.0, rel=1e-9)
    assert run["api_cpu_s_per_rollout"] > 0
    assert run["turns_per_rollout"] >= 21


def test_compare_json_has_the_documented_keys(cli: Cli) -> None:
    result = cli("compare", "codex-spark:http", "codex-spark:ws", "-n", "40", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert {"a", "b", "e2e_reduction", "e2e_reduction_ci95", "ttft_reduction"} <= set(out)
    assert "api_cpu_reduction" in out
    low, high = out["e2e_reduction_ci95"]
    assert low < out["e2e_reduction"] < high


def test_analytic_json_has_means_and_no_intervals(cli: Cli) -> None:
    result = cli("compare", "codex-spark:http", "codex-spark:ws", "--engine", "analytic", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["a"]["engine"] == "analytic"
    assert out["a"]["e2e_s"]["ci95"] is None
    assert out["e2e_reduction_ci95"] is None
    assert sum(out["b"]["budget_s"].values()) == pytest.approx(out["b"]["e2e_s"]["mean"])


def table_rows(text: str) -> dict[str, list[str]]:
    """The cells of each row of a rich table, by the row's first cell."""
    found = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("│ ").split("│")]
        if len(cells) > 1:
            found[cells[0]] = cells[1:]
    return found


def test_human_compare_shows_the_json_budget_reductions_and_verdict(cli: Cli) -> None:
    """The table, reductions and verdict print the numbers of ``--json`` for the same run:
    per stage a and b seconds and shares, b - a, the end-to-end means."""
    args = ("compare", "codex-spark:http", "codex-spark:ws", "-n", "30")
    result, data = cli(*args), json.loads(cli(*args, "--json").stdout)
    assert result.exit_code == 0, result.stderr
    rows = table_rows(result.stdout)
    a, b = data["a"], data["b"]
    shown = [
        stage.value for stage in STAGES if a["budget_s"][stage.value] or b["budget_s"][stage.value]
    ]
    assert [name for name in rows if name in {s.value for s in STAGES}] == shown
    for stage in shown:
        sa, sb = a["budget_s"][stage], b["budget_s"][stage]
        share_a, share_b = a["budget_share"][stage], b["budget_share"][stage]
        assert rows[stage] == [
            f"{sa:.3f}",
            f"{share_a:.1%}",
            f"{sb:.3f}",
            f"{share_b:.1%}",
            f"{sb - sa:+.3f}",
        ]
    ea, eb = a["e2e_s"]["mean"], b["e2e_s"]["mean"]
    assert rows["end to end"] == [f"{ea:.3f}", "", f"{eb:.3f}", "", f"{eb - ea:+.3f}"]
    text = " ".join(result.stdout.split())
    low, high = data["e2e_reduction_ci95"]
    assert (
        f"end-to-end reduction: {data['e2e_reduction']:.1%} (95% CI {low:.1%} to {high:.1%})"
        in text
    )
    assert (
        f"codex-spark:ws is {data['e2e_reduction']:.1%} faster end to end than codex-spark:http"
        in text
    )


def test_presets_lists_presets_hardware_and_transports(cli: Cli) -> None:
    result = cli("presets")
    assert result.exit_code == 0
    for name in (*preset_names(), "cerebras-class", "gpu-flagship", *Transport):
        assert name in result.stdout


@pytest.mark.parametrize("name", preset_names())
def test_show_prints_loadable_toml(cli: Cli, tmp_path: Path, name: str) -> None:
    for flags in ((), ("--resolved",)):
        result = cli("show", name, *flags)
        assert result.exit_code == 0, result.stderr
        path = tmp_path / f"{name}.toml"
        path.write_text(result.stdout)
        assert load_scenario(str(path)) == scenario(name)
