"""What ``make demo`` prints, as the README shows it: the reductions and the verdict.

Runs the command of the Makefile's ``demo`` target with the installed
``loopbudget`` script (next to this interpreter), in a fresh process, 80
columns wide, and keeps the lines from the first reduction to the end.

    .venv/bin/python -m docs.scripts.demo
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from docs.scripts.markdown import Quote
from models.loading import load_scenario

ROOT = Path(__file__).resolve().parents[2]
FIRST_LINE = "end-to-end reduction:"
COLUMNS = 80


def demo_arguments() -> list[str]:
    """The arguments of ``loopbudget`` in the Makefile's ``demo`` recipe."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^demo:.*\n\t\$\(BIN\)/loopbudget (?P<args>.+)$", makefile, re.MULTILINE)
    if recipe is None:
        raise ValueError("Makefile: no `demo` target running $(BIN)/loopbudget")
    return shlex.split(recipe["args"])


def demo_output() -> str:
    """Standard output of the demo command, as a terminal of ``COLUMNS`` shows it."""
    script = Path(sys.executable).with_name("loopbudget")
    done = subprocess.run(
        [str(script), *demo_arguments()],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": str(COLUMNS)},
    )
    return done.stdout


def summary() -> str:
    """The README's example: the demo's last lines, in a fenced block."""
    lines = [line.rstrip() for line in demo_output().splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith(FIRST_LINE))
    return "\n".join(["```text", *lines[first:], "```"])


def quotes() -> list[Quote]:
    """The README's numbers around the example: what the demo simulates, the preset's
    connection lifetime, the number of lessons."""
    drawn = re.search(r"\((\w+), (\d+) rollouts", demo_output())
    if drawn is None:
        raise ValueError("the demo's header no longer names its engine and rollouts")
    preset = load_scenario("codex-spark")
    calls = preset.workload.tool_calls_per_rollout
    low, high = (calls.values[0], calls.values[-1]) if calls.kind == "empirical" else (0, 0)
    lessons = len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.py")))
    return [
        (
            "README.md",
            "({} rollouts of a {}-{}-tool-call bug-fix rollout",
            (drawn[2], f"{low:g}", f"{high:g}"),
        ),
        (
            "README.md",
            "cache lost on rotation ({} min)",
            (f"{preset.connection.ws_lifetime_s / 60:g}",),
        ),
        ("README.md", "`notebooks/`: {} classroom lessons", (str(lessons),)),
    ]


BLOCKS = {"summary": summary}


if __name__ == "__main__":
    print(summary())
