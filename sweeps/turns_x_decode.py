"""Where is the 40%? The end-to-end reduction of WebSocket mode over per-request HTTP
as a heat map over tool calls per rollout and decode speed, with contours.

    .venv/bin/python sweeps/turns_x_decode.py [--out results/turns_x_decode] [--workers N]

Writes sweeps/figures/turns_x_decode.png and .svg (or --figure PATH).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from matplotlib.figure import Figure

from sim.sweep.execute import run_sweep
from sim.sweep.plots import heat_map, save
from sim.sweep.results_table import Results
from sim.sweep.sweepfile import load_sweep

HERE = Path(__file__).resolve().parent
LEVELS = (0.2, 0.3, 0.4)
CODEX_SPARK = (1103.0, 28.75)
"""codex-spark: 1 / E[1/rate] of its decode mixture (tokens/s), mean tool calls."""


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/turns_x_decode"))
    parser.add_argument("--workers", type=int, default=0, help="0: in this process")
    parser.add_argument("--figure", type=Path, default=HERE / "figures" / "turns_x_decode")
    args = parser.parse_args(argv)
    return save(figure(args.out, args.workers), args.figure)


def figure(out: Path, workers: int = 0) -> Figure:
    """Run (or complete) the sweep into ``out`` and draw the heat map with codex-spark marked."""
    run_sweep(load_sweep(HERE / "turns_x_decode.toml"), out, workers, resume=True)
    grid = heat_map(
        Results.load(out),
        "inference.decode_tps",
        "workload.tool_calls_per_rollout",
        "e2e_reduction",
        contours=LEVELS,
    )
    ax = grid.axes[0]
    ax.plot(*CODEX_SPARK, marker="*", markersize=12, color="#f28e2b", linestyle="none")
    ax.annotate(
        "codex-spark",
        CODEX_SPARK,
        xytext=(8, 4),
        textcoords="offset points",
        color="white",
        fontsize=8,
    )
    return grid


if __name__ == "__main__":
    for path in main():
        print(path)
