"""docs/errors.md, section 3: the example of a run refused by the memory cap (what the
command prints now), the caps table (from ``models.limits``) and the constants of the
estimates (from ``sim.analysis.estimates``) that the prose quotes.  The values marked
"measured" beside the constants are measurements, not regenerated.

    .venv/bin/python -m docs.scripts.caps
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from docs.scripts.markdown import Quote, show, table
from models.limits import INPUT_SIZE, MAX_NESTING, MEMORY, ROLLOUT_TURNS, TURNS, Cap
from sim.analysis import estimates
from sim.des.streams import BLOCK_ROLLOUTS
from sim.sweep.axes import MAX_RUNS
from sim.sweep.cluster import MAX_WORKERS_PER_CORE

ROOT = Path(__file__).resolve().parents[2]
PAGE = "docs/errors.md"
REFUSED = ("load", "codex-spark", "--agents", "1000000")
"""A run far over the memory cap: a million agents."""
WIDTH = 84
"""Columns of the example as the page wraps it (the terminal prints one line)."""
COMPARED = {
    INPUT_SIZE: "bytes of a scenario, sweep or uploaded file (read no further)",
    MEMORY: "estimated peak memory of one run",
    TURNS: "turns one simulation runs, all rollouts and replications (about half an hour)",
    ROLLOUT_TURNS: "turns of the longest rollout the tool-call distribution allows",
}


def refused() -> str:
    """The command and its one error line, wrapped for the page, in a fenced block."""
    script = Path(sys.executable).with_name("loopbudget")
    done = subprocess.run(
        [str(script), *REFUSED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("LOOPBUDGET_MAX_")},
    )
    if done.returncode != 2 or done.stdout:
        raise RuntimeError(f"expected one error line and exit 2, got {done}")
    (line,) = done.stderr.splitlines()
    wrapped = textwrap.wrap(line, WIDTH, break_on_hyphens=False, break_long_words=False)
    return "\n".join(["```text", f"$ loopbudget {' '.join(REFUSED)}", *wrapped, "```"])


def _default(cap: Cap) -> str:
    """4 MB, 2,048 MB, 10,000 turns; a power of ten from a million on as 10^N."""
    value = cap.default
    if value >= 1e6 and math.log10(value).is_integer():
        return f"10^{math.log10(value):.0f}"
    return f"{value:,.0f} {cap.unit}"


def caps() -> str:
    return table(
        ["cap", "default", "environment variable", "what is compared"],
        [[cap.what, _default(cap), f"`{cap.env}`", what] for cap, what in COMPARED.items()],
    )


def quotes() -> list[Quote]:
    e = estimates
    return [
        (PAGE, "Fixed limits: nesting of {} levels (section 2)", (str(MAX_NESTING),)),
        (PAGE, "a sweep of at most {}", (f"{MAX_RUNS:,}",)),
        (PAGE, "at most {} local workers per", (str(MAX_WORKERS_PER_CORE),)),
        (
            PAGE,
            "block, min(rollouts, {}) x the mean turns + the longest rollout, at",
            (f"{BLOCK_ROLLOUTS:,}",),
        ),
        (PAGE, "{} bytes per turn (measured: 1,260)", (f"{e.BLOCK_BYTES_PER_TURN:,}",)),
        (
            PAGE,
            "plus the records, {} bytes per rollout (its {} recorded numbers",
            (f"{e.RECORD_BYTES_PER_ROLLOUT:,}", str(e.RECORD_NUMBERS_PER_ROLLOUT)),
        ),
        (
            PAGE,
            "and {} per turn, plus {} bytes per turn for a trace",
            (str(e.RECORD_BYTES_PER_TURN), f"{e.TRACE_BYTES_PER_TURN:,}"),
        ),
        (
            PAGE,
            "{} bytes per turn and {} bytes for its process",
            (f"{e.BLOCK_BYTES_PER_TURN:,}", f"{e.IN_FLIGHT_BYTES:,}"),
        ),
        (PAGE, "at {} turns each (measured", (f"{e.TURNS_PER_REFUSAL:g}",)),
        (
            PAGE,
            "**the analytic engine**: {} MB for the connection-age grid",
            (f"{e.ANALYTIC_GRID_BYTES / 2**20:.0f}",),
        ),
        (PAGE, "(measured: 52) plus {} bytes per point", (str(e.ANALYTIC_BYTES_PER_TURN),)),
        (PAGE, "its whole block of {} rollouts", (f"{BLOCK_ROLLOUTS:,}",)),
    ]


BLOCKS = {"refused": refused, "caps": caps}


if __name__ == "__main__":
    for name, block in BLOCKS.items():
        print(f"{name}:\n{block()}\n")
    show(quotes())
