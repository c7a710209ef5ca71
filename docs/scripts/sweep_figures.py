"""What docs/sweeps.md reads from the three figures of sweeps/: the Amdahl curve, the
heat map over tool calls and decode speed, and the tornado.

Runs each sweep file of ``sweeps/`` (analytic engine) into a temporary
directory and reads its rows, as the figure scripts do.

    .venv/bin/python -m docs.scripts.sweep_figures
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

from docs.scripts.markdown import Quote, about, percent, show
from models.loading import load_scenario
from sim.sweep.execute import run_sweep
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep

PAGE = "docs/sweeps.md"
SWEEPS = Path(__file__).resolve().parents[2] / "sweeps"
DECODE, CALLS = "inference.decode_tps", "workload.tool_calls_per_rollout"
PUBLISHED = 0.40
"""FACTS: up to about 40% faster end to end."""
TORNADO_BARS = (
    CALLS,
    "safety.blocking_per_1k_tokens_ms",
    DECODE,
    "workload.tools[3].time_s.median",
    "workload.output_tokens.median",
)
"""The widest bars, in the order the page names them."""


@cache
def rows(name: str) -> tuple[dict[str, Any], ...]:
    """The successful rows of ``sweeps/NAME.toml``."""
    with tempfile.TemporaryDirectory() as directory:
        run_sweep(load_sweep(SWEEPS / f"{name}.toml"), Path(directory) / name, workers=0)
        table = read_results(Path(directory) / name)
    return tuple(row for row in table.to_pylist() if row["error"] is None)


def at(name: str, transport: str, where: dict[str, Any]) -> dict[str, Any]:
    """The one row of a transport whose columns equal ``where`` (path -> value)."""
    (found,) = [
        r
        for r in rows(name)
        if r["transport"] == transport and all(r[k] == v for k, v in where.items())
    ]
    return found


def base_reduction() -> float:
    """The tornado's base point: codex-spark itself, no axis set."""
    axes = [axis.path for axis in load_sweep(SWEEPS / "tornado.toml").file.axes]
    return at("tornado", "ws", {axis: None for axis in axes})["e2e_reduction"]


def crossing_tps(curve: list[tuple[float, float]], level: float = PUBLISHED) -> float:
    """Where a rising reduction first reaches ``level``, interpolated linearly between the
    sweep's speeds as the heat map's contour lines are."""
    for (x0, y0), (x1, y1) in pairwise(curve):
        if y0 < level <= y1:
            return x0 + (level - y0) / (y1 - y0) * (x1 - x0)
    raise ValueError(f"the curve does not reach {level}")


def amdahl_quotes() -> list[Quote]:
    def speed(tps: float) -> tuple[dict[str, Any], dict[str, Any]]:
        return at("amdahl", "http", {DECODE: tps}), at("amdahl", "ws", {DECODE: tps})

    slow, fast, burst = speed(65.0), speed(1000.0), speed(4000.0)
    curve = sorted(
        (r[DECODE], r["e2e_reduction"]) for r in rows("amdahl") if r["transport"] == "ws"
    )
    decode = load_scenario("codex-spark").inference.decode_tps
    return [
        (
            PAGE,
            "reduction is {}: decode takes {} of the {} s a rollout spends over HTTP. At 1,000 "
            "tokens/s it is {}, at 4,000 it is {} (decode {} s and {} s of {} s and {} s).",
            (
                percent(slow[1]["e2e_reduction"]),
                f"{slow[0]['budget_s_decode']:.0f}",
                f"{slow[0]['e2e_s_mean']:.0f}",
                percent(fast[1]["e2e_reduction"]),
                percent(burst[1]["e2e_reduction"]),
                f"{fast[0]['budget_s_decode']:.1f}",
                f"{burst[0]['budget_s_decode']:.1f}",
                f"{fast[0]['e2e_s_mean']:.1f}",
                f"{burst[0]['e2e_s_mean']:.1f}",
            ),
        ),
        (PAGE, '40%" at about {} tokens/s;', (about(crossing_tps(curve)),)),
        (
            PAGE,
            "1 / E[1/rate] = {} tokens/s) gives {}.",
            (f"{1 / decode.mean_reciprocal():,.0f}", percent(base_reduction())),
        ),
    ]


def heat_map_quotes() -> list[Quote]:
    curves: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for r in rows("turns_x_decode"):
        if r["transport"] == "ws":
            curves[int(r[CALLS])].append((r[DECODE], r["e2e_reduction"]))
    for curve in curves.values():
        curve.sort()
    below = [n for n, curve in curves.items() if max(y for _, y in curve) < PUBLISHED]
    reached = sorted(n for n in curves if n not in below)
    last_below, first_reached = max(below), reached[0]
    return [
        (
            PAGE,
            "with {} tool calls or fewer it stays below 40% at every speed up to 5,000 tokens/s "
            "({} at {} calls); from {} calls it is reached, at about {} tokens/s, at 25 calls "
            "from about {}, at 33 from about {}, at 50 from about {} and at 74 from about {}.",
            (
                f"{last_below}",
                percent(max(y for _, y in curves[last_below]), 1),
                f"{last_below}",
                f"{first_reached}",
                *(about(crossing_tps(curves[n])) for n in (first_reached, 25, 33, 50, 74)),
            ),
        )
    ]


def tornado_quotes() -> list[Quote]:
    ws = [r for r in rows("tornado") if r["transport"] == "ws"]
    ends = {}
    for axis in TORNADO_BARS:
        alone = sorted((r[axis], r["e2e_reduction"]) for r in ws if r[axis] is not None)
        ends[axis] = (percent(alone[0][1]), percent(alone[-1][1]))
    return [
        (PAGE, "One at a time around codex-spark (base {}),", (percent(base_reduction(), 1),)),
        (
            PAGE,
            "the number of tool calls ({} to {}), the blocking safety classifiers' cost per 1k "
            "tokens ({} to {}), decode speed ({} to {}), the time of the slowest tool "
            "(`run_tests`; {} to {}, longer tools dilute the saving) and the output tokens per "
            "turn ({} to {}).",
            tuple(v for axis in TORNADO_BARS for v in ends[axis]),
        ),
    ]


def quotes() -> list[Quote]:
    return [*amdahl_quotes(), *heat_map_quotes(), *tornado_quotes()]


if __name__ == "__main__":
    show(quotes())
