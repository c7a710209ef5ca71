"""Write the students' copies of the lessons: Jupyter notebooks without the answer and the
instructor's cells.

    .venv/bin/python notebooks/handout.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext

HERE = Path(__file__).resolve().parent
KEPT_FROM_STUDENTS = {"answer", "instructor"}
"""Cell tags of what only the instructor sees (docs/answer-key.md has them all)."""


def handout(out: Path) -> list[Path]:
    """One ``.ipynb`` per lesson in ``out``, its answer and instructor cells left out."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(HERE.glob("[0-9][0-9]_*.py")):
        notebook = jupytext.read(source)
        notebook.cells = [
            cell
            for cell in notebook.cells
            if not KEPT_FROM_STUDENTS & set(cell.metadata.get("tags", []))
            and cell.source.strip() != "## Answer"
        ]
        path = out / f"{source.stem}.ipynb"
        jupytext.write(notebook, path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in handout(Path(sys.argv[1])):
        print(path)
