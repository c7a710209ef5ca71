"""The Amdahl curve: the end-to-end reduction of WebSocket mode over per-request HTTP
against decode speed, with 65, 1,000 and 4,000 tokens/s marked.

    .venv/bin/python sweeps/amdahl.py [--out results/amdahl] [--workers N]

Writes sweeps/figures/amdahl.png and .svg (or --figure PATH).  An unchanged
sweep already in --out is reused; a partial one is completed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from matplotlib.figure import Figure

from models.published import DECODE_MARKS
from sim.sweep.execute import run_sweep
from sim.sweep.plots import line_plot, save
from sim.sweep.results_table import Results
from sim.sweep.sweepfile import load_sweep

HERE = Path(__file__).resolve().parent
MARKS_TPS = tuple(DECODE_MARKS)
"""FACTS: GPT-5-class flagships ~65 tokens/s; Codex-Spark 1,000 sustained, bursts to 4,000."""
PUBLISHED_REDUCTION = 0.40
"""FACTS: WebSocket mode up to about 40% faster end to end (vendor claim)."""


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/amdahl"))
    parser.add_argument("--workers", type=int, default=0, help="0: in this process")
    parser.add_argument("--figure", type=Path, default=HERE / "figures" / "amdahl")
    args = parser.parse_args(argv)
    return save(figure(args.out, args.workers), args.figure)


def figure(out: Path, workers: int = 0) -> Figure:
    """Run (or complete) the sweep into ``out`` and draw the curve with its marks."""
    run_sweep(load_sweep(HERE / "amdahl.toml"), out, workers, resume=True)
    curve = line_plot(Results.load(out), "inference.decode_tps", "e2e_reduction", marks=MARKS_TPS)
    ax = curve.axes[0]
    ax.axhline(PUBLISHED_REDUCTION, color="#e15759", linestyle=":", linewidth=1)
    ax.text(
        75.0,
        PUBLISHED_REDUCTION + 0.005,
        "published: up to about 40% (vendor claim)",
        color="#e15759",
        fontsize=8,
    )
    return curve


if __name__ == "__main__":
    for path in main():
        print(path)
