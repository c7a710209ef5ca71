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


BLOCKS = {"summary": summary}


if __name__ == "__main__":
    print(summary())
