"""Sweep files: what a valid file resolves to, and one clear line for every kind of bad input."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from models.errors import ScenarioError
from sim.analysis.run import Engine
from sim.sweep.sweepfile import MAX_RUNS, load_sweep
from sim.turn.transports import Transport

HEAD = """
name = "t"
base = "codex-spark"
transports = ["http", "ws"]
"""
AXIS = """
[[axes]]
path = "network.rtt_ms"
values = [10.0, 30.0]
"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_valid_file_resolves_seeds_baseline_and_defaults(tmp_path: Path) -> None:
    sweep = load_sweep(write(tmp_path, HEAD + AXIS))
    assert sweep.file.engine is Engine.ANALYTIC
    assert sweep.file.transports == (Transport.HTTP, Transport.WS)
    assert sweep.baseline is Transport.HTTP
    assert sweep.seeds == (sweep.base_raw["seed"],)
    assert sweep.runs == 2
    assert sweep.points_per_part == 512


def test_replications_count_up_from_the_base_seed_and_des_parts_hold_one_run(
    tmp_path: Path,
) -> None:
    text = HEAD + 'engine = "des"\nreplications = 3\nrollouts = 7\n' + AXIS
    sweep = load_sweep(write(tmp_path, text))
    first = sweep.base_raw["seed"]
    assert sweep.seeds == (first, first + 1, first + 2)
    assert sweep.runs == 6
    assert sweep.points_per_part == 1


def test_the_baseline_is_the_first_transport_without_http(tmp_path: Path) -> None:
    text = HEAD.replace('["http", "ws"]', '["ws", "ws-append"]') + AXIS
    assert load_sweep(write(tmp_path, text)).baseline is Transport.WS
    single = HEAD.replace('["http", "ws"]', '["ws"]') + AXIS
    assert load_sweep(write(tmp_path, single)).baseline is None


def test_the_base_file_is_found_next_to_the_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('extends = "codex-spark"\n[network]\nrtt_ms = 77.0\n')
    sweep_dir = tmp_path / "elsewhere"
    sweep_dir.mkdir()
    text = HEAD.replace('"codex-spark"', '"../mine.toml"') + AXIS
    sweep = load_sweep(write(sweep_dir, text))
    assert sweep.base_raw["network"]["rtt_ms"] == 77.0


def test_fixed_overrides_apply_to_the_base(tmp_path: Path) -> None:
    text = HEAD + 'set = ["api.route_ms=50.0"]\n' + AXIS
    assert load_sweep(write(tmp_path, text)).base_raw["api"]["route_ms"] == 50.0


def test_a_value_that_only_conflicts_with_another_field_is_left_to_its_point(
    tmp_path: Path,
) -> None:
    text = HEAD + '[[axes]]\npath = "api.route_ms"\nvalues = [2.0, 40.0]\n'
    assert load_sweep(write(tmp_path, text)).runs == 2


BAD = {
    "invalid TOML": (HEAD + "axes = [\n", "invalid TOML"),
    "missing base": (HEAD.replace('base = "codex-spark"', "") + AXIS, "base: missing"),
    "unknown key": (HEAD + "colour = 1\n" + AXIS, "colour: unknown field; allowed:"),
    "unknown axis key": (HEAD + AXIS + "step = 2\n", "axes[0].step: unknown field"),
    "unknown transport": (
        HEAD.replace('"ws"]', '"grpc"]') + AXIS,
        "transports[1] = 'grpc'",
    ),
    "unknown engine": (HEAD + 'engine = "monte-carlo"\n' + AXIS, "engine = 'monte-carlo'"),
    "wrong type": (HEAD + 'rollouts = "many"\n' + AXIS, "rollouts = 'many'"),
    "zero rollouts": (HEAD + "rollouts = 0\n" + AXIS, "rollouts = 0"),
    "no transports": (HEAD.replace('["http", "ws"]', "[]") + AXIS, "transports = []"),
    "repeated transport": (
        HEAD.replace('["http", "ws"]', '["ws", "ws"]') + AXIS,
        "transports = ['ws', 'ws']: must be distinct",
    ),
    "baseline not swept": (
        HEAD + 'baseline = "http-full"\n' + AXIS,
        "baseline = 'http-full': must be one of the transports (http, ws)",
    ),
    "seeds and replications": (
        HEAD + 'engine = "des"\nseeds = [1]\nreplications = 2\n' + AXIS,
        "seeds and replications: give one of them",
    ),
    "repeated seed": (HEAD + 'engine = "des"\nseeds = [1, 1]\n' + AXIS, "must be distinct"),
    "negative seed": (HEAD + 'engine = "des"\nseeds = [-1]\n' + AXIS, "seeds[0] = -1"),
    "analytic with seeds": (
        HEAD + "replications = 3\n" + AXIS,
        "engine = 'analytic' is deterministic: give one seed, not 3",
    ),
    "no axes": (HEAD, "axes: missing"),
    "values and a range": (
        HEAD + AXIS + "start = 1.0\n",
        "axes[0] (network.rtt_ms): give exactly one of",
    ),
    "axis without values": (HEAD + '[[axes]]\npath = "network.rtt_ms"\n', "give exactly one of"),
    "range without num": (
        HEAD + '[[axes]]\npath = "network.rtt_ms"\nstart = 1.0\nstop = 2.0\n',
        "a range needs start, stop and num; missing ['num']",
    ),
    "empty range": (
        HEAD + '[[axes]]\npath = "network.rtt_ms"\nstart = 5.0\nstop = 5.0\nnum = 3\n',
        "start, stop = 5.0, 5.0: the first must be smaller",
    ),
    "log range through zero": (
        HEAD + '[[axes]]\npath = "network.rtt_ms"\nstart = 0.0\nstop = 9.0\nnum = 3\n'
        'scale = "log"\n',
        "scale = 'log' needs positive bounds",
    ),
    "unknown scale": (HEAD + AXIS + 'scale = "cubic"\n', "axes[0].scale = 'cubic'"),
    "include outside a range": (
        HEAD + AXIS + "include = [5.0]\n",
        "include is only for ranges",
    ),
    "integer values": (HEAD + AXIS + "integer = true\n", "integer is only for ranges"),
    "sampled axis without a design": (
        HEAD + '[[axes]]\npath = "network.rtt_ms"\nlow = 1.0\nhigh = 9.0\n',
        "low and high need a [sample] table",
    ),
    "design without sampled axes": (
        HEAD + AXIS + '[sample]\nmethod = "lhs"\npoints = 4\nseed = 1\n',
        "sample: no axis has low and high to sample",
    ),
    "unknown sampling method": (
        HEAD
        + '[[axes]]\npath = "network.rtt_ms"\nlow = 1.0\nhigh = 9.0\n'
        + '[sample]\nmethod = "sobol"\npoints = 4\nseed = 1\n',
        "sample.method = 'sobol'",
    ),
    "no sampled points": (
        HEAD
        + '[[axes]]\npath = "network.rtt_ms"\nlow = 1.0\nhigh = 9.0\n'
        + '[sample]\nmethod = "lhs"\npoints = 0\nseed = 1\n',
        "sample.points = 0",
    ),
    "one-at-a-time with a sampled axis": (
        HEAD
        + 'design = "one-at-a-time"\n'
        + '[[axes]]\npath = "network.rtt_ms"\nlow = 1.0\nhigh = 9.0\n'
        + '[sample]\nmethod = "lhs"\npoints = 4\nseed = 1\n',
        "design = 'one-at-a-time': axes need values or ranges",
    ),
    "repeated path": (HEAD + AXIS + AXIS, "path 'network.rtt_ms' appears more than once"),
    "seed as an axis": (
        HEAD + '[[axes]]\npath = "seed"\nvalues = [1, 2]\n',
        "axes: path 'seed': give the seeds with seeds = [...] or replications = N",
    ),
    "unknown preset": (
        HEAD.replace('"codex-spark"', '"codex-turbo"') + AXIS,
        "preset = 'codex-turbo': unknown preset; allowed:",
    ),
    "missing base file": (
        HEAD.replace('"codex-spark"', '"nowhere.toml"') + AXIS,
        "no such file",
    ),
    "set without a value": (HEAD + 'set = ["network.rtt_ms"]\n' + AXIS, "expected PATH=VALUE"),
    "set to an invalid value": (
        HEAD + 'set = ["network.rtt_ms=-1.0"]\n' + AXIS,
        "network.rtt_ms = -1.0",
    ),
    "unknown field on an axis": (
        HEAD + '[[axes]]\npath = "network.rtt"\nvalues = [1.0]\n',
        "axes[0]: network.rtt: unknown field; allowed:",
    ),
    "unknown section on an axis": (
        HEAD + '[[axes]]\npath = "netwrk.rtt_ms"\nvalues = [1.0]\n',
        "axes[0]: path netwrk.rtt_ms",
    ),
    "index out of range on an axis": (
        HEAD + '[[axes]]\npath = "workload.tools[9].weight"\nvalues = [1.0]\n',
        "index outside 0..3",
    ),
    "axis value out of range": (
        HEAD + '[[axes]]\npath = "network.rtt_ms"\nvalues = [10.0, -5.0]\n',
        "axes[0]: network.rtt_ms = -5.0: Input should be greater than or equal to 0",
    ),
    "axis value of the wrong type": (
        HEAD + '[[axes]]\npath = "network.rtt_ms"\nvalues = ["fast"]\n',
        "axes[0]: network.rtt_ms = 'fast'",
    ),
    "axis range leaving the allowed range": (
        HEAD + '[[axes]]\npath = "api.render_cache_hit_prob"\nstart = 0.5\nstop = 1.5\nnum = 3\n',
        "api.render_cache_hit_prob = 1.5: Input should be less than or equal to 1",
    ),
    "zero decode rate": (
        HEAD + '[[axes]]\npath = "inference.decode_tps"\nvalues = [0.0]\n',
        "axes[0]: inference.decode_tps = ",
    ),
    "too many points": (
        HEAD
        + '[[axes]]\npath = "network.rtt_ms"\nstart = 1.0\nstop = 9.0\nnum = 2000\n'
        + '[[axes]]\npath = "api.route_ms"\nstart = 10.0\nstop = 90.0\nnum = 2000\n',
        f"at most {MAX_RUNS:,}",
    ),
    "zero points per part": (HEAD + "points_per_part = 0\n" + AXIS, "points_per_part = 0"),
}


@pytest.mark.parametrize("text, expected", BAD.values(), ids=BAD.keys())
def test_bad_input_is_one_line_naming_the_file_field_and_rule(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        load_sweep(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(str(path)), message
    assert expected in message, message


def test_invalid_toml_names_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"line 2, column \d+"):
        load_sweep(write(tmp_path, 'name = "t"\nbase = \n'))


def test_a_missing_sweep_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file"):
        load_sweep(tmp_path / "absent.toml")


def test_the_command_reports_bad_input_in_one_line_with_exit_code_2(tmp_path: Path, cli) -> None:
    path = write(tmp_path, HEAD + 'engine = "monte-carlo"\n' + AXIS)
    result = cli("sweep", str(path), "--out", str(tmp_path / "out"), "--workers", "0")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ") and "engine = 'monte-carlo'" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "options, expected",
    [
        (("--workers", "2", "--scheduler", "tcp://127.0.0.1:1"), "give one of them"),
        (("--workers", "-1"), "--workers = -1: must be >= 0"),
    ],
)
def test_conflicting_execution_options_exit_2(
    tmp_path: Path, cli, options: tuple[str, ...], expected: str
) -> None:
    path = write(tmp_path, HEAD + AXIS)
    result = cli("sweep", str(path), "--out", str(tmp_path / "out"), *options)
    assert result.exit_code == 2
    assert expected in result.stderr


def test_the_sweep_file_example_in_the_docs_is_valid(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parent.parent / "docs" / "sweeps.md"
    example = docs.read_text().split("```toml\n", 1)[1].split("```", 1)[0]
    sweep = load_sweep(write(tmp_path, example))
    assert sweep.file.name == "amdahl" and len(sweep.seeds) == 3
    assert sweep.runs == 100 * 3 * 3
