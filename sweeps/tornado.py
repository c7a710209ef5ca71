"""Which parameter moves the 40%? One-at-a-time sensitivity (tornado) of the end-to-end
reduction of WebSocket mode over per-request HTTP around codex-spark.

    .venv/bin/python sweeps/tornado.py [--out results/tornado] [--workers N]

Writes sweeps/figures/tornado.png and .svg (or --figure PATH).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from matplotlib.figure import Figure

from sim.sweep.execute import run_sweep
from sim.sweep.plots import save, tornado
from sim.sweep.results_table import Results
from sim.sweep.sweepfile import load_sweep

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/tornado"))
    parser.add_argument("--workers", type=int, default=0, help="0: in this process")
    parser.add_argument("--figure", type=Path, default=HERE / "figures" / "tornado")
    args = parser.parse_args(argv)
    return save(figure(args.out, args.workers), args.figure)


def figure(out: Path, workers: int = 0) -> Figure:
    """Run (or complete) the sweep into ``out`` and draw the tornado of the e2e reduction."""
    run_sweep(load_sweep(HERE / "tornado.toml"), out, workers, resume=True)
    return tornado(Results.load(out), "e2e_reduction")


if __name__ == "__main__":
    for path in main():
        print(path)
