"""What the fuzz suite feeds the command line: hostile values, scenario files, ``--set``
values, sweep files and argument lists.

Each generator starts from something valid more often than not (a preset, a
working sweep, a command that runs) and breaks a few parts of it, so the runs
reach every stage: parsing, validation, the caps, the engines and the output.
"""

from __future__ import annotations

import math
import random
from typing import Any

import tomli_w
from hypothesis import strategies as st

from models.assignments import set_path
from models.distributions import KINDS
from models.errors import ScenarioError
from models.loading import raw_scenario

PRESET = "codex-spark"
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -1.0, 1e-300, 0.5, 3.0, 30.0, 1e9, 1e12, 1e308, math.inf, math.nan]),
)
INTS = st.one_of(st.integers(-5, 3000), st.sampled_from([10**6, 2**63, 10**30, -(2**63)]))
TEXT = st.one_of(
    st.text(max_size=10), st.sampled_from(["yes", "true", "1", "inf", "", "codex-spark", "ws"])
)
SCALARS = st.one_of(FLOATS, INTS, st.booleans(), TEXT)


def distribution_tables(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Tables that look like distributions, with any kind and any parameters."""
    parameter = st.sampled_from(
        ["value", "mean", "median", "sigma", "low", "high", "values", "weights", "components"]
    )
    return st.builds(
        lambda kind, params: {"kind": kind, **params},
        st.sampled_from([*KINDS, "gamma", ""]),
        st.dictionaries(parameter, values, max_size=3),
    )


HOSTILE = st.recursive(
    st.one_of(SCALARS, distribution_tables(SCALARS)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        distribution_tables(inner),
        st.dictionaries(st.sampled_from(["kind", "x", "median"]), inner, max_size=2),
    ),
    max_leaves=6,
)
"""Numbers at and past every edge, the wrong types, tables that are almost distributions."""
SIZE = st.floats(0.001, 100)
PLAUSIBLE = st.one_of(
    st.floats(0, 100),
    st.integers(0, 60),
    st.booleans(),
    st.builds(lambda m: {"kind": "exponential", "mean": m}, SIZE),
    st.builds(lambda m, s: {"kind": "lognormal", "median": m, "sigma": s}, SIZE, st.floats(0, 3)),
    st.builds(lambda a, b: {"kind": "uniform", "low": a, "high": a + b}, SIZE, SIZE),
    st.builds(
        lambda v: {"kind": "empirical", "values": v, "weights": [1.0] * len(v)},
        st.lists(st.integers(0, 40), min_size=1, max_size=4),
    ),
    st.builds(
        lambda parts: {"kind": "mixture", "weights": [1.0] * len(parts), "components": parts},
        st.lists(SIZE, min_size=1, max_size=3),
    ),
)
"""Values near the presets' own: most are valid somewhere, so runs get past validation."""
VALUES = st.one_of(PLAUSIBLE, PLAUSIBLE, HOSTILE)


def leaf_paths(table: Any, prefix: str = "") -> list[str]:
    """Dotted paths (``workload.tools[1].time_s.median``) of every leaf of a scenario table."""
    if isinstance(table, dict):
        items = [(f"{prefix}.{key}" if prefix else key, value) for key, value in table.items()]
    elif isinstance(table, list):
        items = [(f"{prefix}[{index}]", value) for index, value in enumerate(table)]
    else:
        return [prefix]
    return [path for path, value in items for path in leaf_paths(value, path)]


def value_at(table: Any, path: str) -> Any:
    for part in path.replace("[", ".").replace("]", "").split("."):
        table = table[int(part)] if isinstance(table, list) else table[part]
    return table


BASE = raw_scenario(PRESET)
PATHS = leaf_paths(BASE)
NUMBER_PATHS = [p for p in PATHS if type(value_at(BASE, p)) in (int, float)]


def near(value: Any) -> st.SearchStrategy[Any]:
    """Values of the same type as a preset's ``value``, from 0 to three times it."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(0, max(3, 3 * value))
    if isinstance(value, float):
        return st.floats(0, max(1.0, 3 * value))
    if value in ("closed", "open"):
        return st.sampled_from(["closed", "open"])
    return st.just(value)


CHANGES = st.one_of(
    st.sampled_from(PATHS).flatmap(lambda p: st.tuples(st.just(p), near(value_at(BASE, p)))),
    st.tuples(st.sampled_from(PATHS), PLAUSIBLE),
    st.tuples(st.sampled_from(PATHS), HOSTILE),
)
"""(path, value) changes of the preset: mostly of the value's own type and scale."""


def changed(changes: list[tuple[str, Any]]) -> dict[str, Any]:
    table = raw_scenario(PRESET)
    for path, value in changes:
        try:
            set_path(table, path, value)
        except ScenarioError:
            continue
    return table


def corrupted(text: str, seed: int) -> str:
    """``text`` with a slice cut out or a few characters of TOML syntax put in."""
    rng = random.Random(seed)
    at = rng.randrange(len(text))
    if rng.random() < 0.5:
        return text[:at] + text[at + rng.randrange(1, 200) :]
    inserted = rng.choice(["[", "]", "{", "=", '"', "'''", "\n[[x]]\n", "[" * 40])
    return text[:at] + inserted + text[at:]


SCENARIO_FILES = st.one_of(
    st.lists(CHANGES, min_size=1, max_size=3).map(lambda c: tomli_w.dumps(changed(c)).encode()),
    st.tuples(st.just(tomli_w.dumps(BASE)), st.integers(0, 2**32)).map(
        lambda pair: corrupted(*pair).encode()
    ),
    st.binary(max_size=300),
    st.integers(20, 3000).map(lambda d: f"x = {'[' * d}{']' * d}\n".encode()),
)
"""A changed preset, a corrupted one, random bytes, or thousands of nested brackets."""


def toml_value(value: Any) -> str:
    """``value`` as an inline TOML value (what ``--set`` reads after ``PATH=``)."""
    if isinstance(value, dict):
        items = (f"{toml_value(str(key))} = {toml_value(item)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").strip()


SET_PATHS = st.one_of(
    st.sampled_from(PATHS),
    st.sampled_from(sorted({path.split(".")[0] for path in PATHS})),
    st.sampled_from(["workload.tools[9].weight", "netwerk.rtt_ms", "seed", "", "a..b", "[0]"]),
)
SET_TEXT = st.one_of(
    VALUES.map(toml_value),
    st.text(alphabet="[]{}=\"',.0123456789aeinf- ", max_size=30),
    st.integers(20, 3000).map(lambda d: "[" * d + "]" * d),
)
SETS = st.one_of(
    CHANGES.map(lambda change: f"{change[0]}={toml_value(change[1])}"),
    st.tuples(SET_PATHS, SET_TEXT).map("=".join),
)
"""``--set`` assignments: a preset value changed, or any path with any text."""


def _axis(path: str) -> st.SearchStrategy[dict[str, Any]]:
    value = near(value_at(BASE, path))
    integer = isinstance(value_at(BASE, path), int)

    def span(start: float, width: float, num: int) -> dict[str, Any]:
        stop = start + width + 1.0
        return {"path": path, "start": start, "stop": stop, "num": num, "integer": integer}

    return st.one_of(
        st.builds(lambda v: {"path": path, "values": v}, st.lists(value, min_size=1, max_size=3)),
        st.builds(span, value.map(float), st.floats(0, 10), st.integers(1, 3)),
    )


VALID_SWEEPS = st.fixed_dictionaries(
    {
        "name": st.just("fuzz"),
        "base": st.just(PRESET),
        "transports": st.sampled_from([["http", "ws"], ["ws"], ["http-full", "ws-append"]]),
        "axes": st.lists(
            st.sampled_from(NUMBER_PATHS), min_size=1, max_size=2, unique=True
        ).flatmap(lambda paths: st.tuples(*map(_axis, paths)).map(list)),
    },
    optional={
        "engine": st.just("des"),
        "rollouts": st.integers(2, 20),
        "design": st.sampled_from(["grid", "one-at-a-time"]),
        "points_per_part": st.integers(1, 3),
    },
)
SWEEP_KEYS = ["name", "base", "transports", "engine", "rollouts", "seeds", "replications"]
SWEEP_KEYS += ["design", "sample", "points_per_part", "set", "axes", "description", "extra"]
AXIS_KEYS = ["path", "values", "start", "stop", "num", "low", "high", "scale", "integer"]


def broken_sweep(sweep: dict[str, Any], breaks: list[tuple[bool, str, Any]]) -> dict[str, Any]:
    """``sweep`` with each break applied: (in the first axis?, key, value)."""
    for in_axis, key, value in breaks:
        (sweep["axes"][0] if in_axis else sweep)[key] = value
    return sweep


SWEEP_FILES = st.builds(
    broken_sweep,
    VALID_SWEEPS,
    st.lists(
        st.one_of(
            st.tuples(st.just(False), st.sampled_from(SWEEP_KEYS), VALUES),
            st.tuples(st.just(True), st.sampled_from(AXIS_KEYS), VALUES),
            st.tuples(st.just(False), st.just("set"), st.lists(SETS, max_size=2)),
        ),
        max_size=2,
    ),
)
"""A working sweep with up to two of its keys or its first axis's keys broken."""

COMMANDS = {
    "presets": [],
    "show": ["codex-spark"],
    "run": ["codex-spark:ws", "-n", "3"],
    "compare": ["codex-spark:http", "codex-spark:ws", "-n", "3"],
    "load": ["tests/data/tiny-fleet.toml", "--agents", "2,3"],
    "capacity": [
        "tests/data/tiny-fleet.toml", "--slo", "e2e_p95_s=60",
        "--set", "load.duration_s=20", "--set", "load.warmup_s=5",
    ],
    "plot": ["{results}", "--x", "network.rtt_ms"],
}  # fmt: skip
"""A command that works, for each command; the argument lists below edit them."""
TOKENS = [
    "--agents", "1,,2", "3", "0", "2,3", "1e3", "--rates", "1e-6", "0.5", "inf", "nan",
    "--slo", "ttft_p95_s=1", "ttft_p95_s=inf", "e2e_p95_s=-1", "bogus=1", "--max-agents",
    "-5", "--json", "--set", "load.duration_s=20", "load.agents=true", "--seed", "x", "-n",
    "--mark", "--contour", "--x", "--y", "e2e_s_mean", "network.rtt_ms", "--kind", "heatmap",
    "--hue", "--where", "network.rtt_ms=30", "--resolved", "--engine", "analytic",
    "tests/data/tiny-fleet.toml", "codex-spark", "nope", "tests/data/bad/not-utf8.toml",
    "--trace", "{tmp}/t.json", "{results}", "/etc",
]  # fmt: skip
ACTIONS = st.sampled_from(["insert", "replace", "delete"])
EDITS = st.lists(st.tuples(ACTIONS, st.floats(0, 1), st.sampled_from(TOKENS)), max_size=3)


def edited(command: str, edits: list[tuple[str, float, str]]) -> list[str]:
    """The working arguments of ``command`` with tokens inserted, replaced or deleted."""
    args = list(COMMANDS[command])
    for action, where, token in edits:
        at = int(where * len(args))
        if action == "insert" or not args:
            args.insert(at, token)
        elif action == "replace":
            args[min(at, len(args) - 1)] = token
        else:
            del args[min(at, len(args) - 1)]
    return [command, *args]


ARGUMENT_LISTS = st.builds(edited, st.sampled_from(sorted(COMMANDS)), EDITS)
RUN_OPTIONS = st.lists(
    st.sampled_from(
        [
            ["--json"],
            ["--json"],
            ["--engine", "analytic"],
            ["--engine", "fast"],
            ["-n", "40"],
            ["-n", "1"],
            ["-n", "0"],
            ["-n", "many"],
            ["-n", "99999999999999999999"],
            ["--seed", "7"],
            ["--seed", "-1"],
            ["--trace", "{tmp}/t.json"],
            ["--trace", "/nonexistent/dir/t.json"],
            ["--trace", "{tmp}"],
        ]
    ),
    max_size=3,
).map(lambda groups: ["-n", "3", *(token for group in groups for token in group)])
"""Options of run and compare after three rollouts (a later ``-n`` wins)."""
