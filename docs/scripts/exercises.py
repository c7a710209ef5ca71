"""docs/exercises.md and docs/answer-key.md, generated from the classroom notebooks.

The notebooks (``notebooks/NN_*.py``, jupytext percent scripts) are the one
source: each lesson's question, command-line version and answer come from its
cells tagged ``question``, ``commands`` and ``answer`` (the ``ANSWER`` string,
whose numbers the notebook itself checks against the model when the suite runs
it), and the answer key adds the cells tagged ``instructor`` and the typical
prediction of the ``prediction`` cell.

    .venv/bin/python -m docs.scripts.exercises
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import jupytext

from docs.scripts.markdown import Quote

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


@dataclass(frozen=True)
class Lesson:
    """What the pages need of one notebook."""

    number: int
    name: str
    title: str
    question: str
    commands: str
    answer: str
    instructor: str
    typical: dict[str, object]
    file: str


def _markdown(cell) -> str:
    return cell.source.strip()


@cache
def lessons() -> tuple[Lesson, ...]:
    found = []
    for number, path in enumerate(sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")), start=1):
        cells = jupytext.read(path).cells
        tagged = {tag: cell for cell in cells for tag in cell.metadata.get("tags", [])}
        heading = next(_markdown(c) for c in cells if c.cell_type == "markdown").splitlines()[0]
        title = re.sub(r"^# Lesson \d+: ", "", heading)
        found.append(
            Lesson(
                number=number,
                name=re.sub(r"^\d+_", "", path.stem).replace("_", "-"),
                title=title,
                question=_markdown(tagged["question"]),
                commands=_markdown(tagged["commands"]),
                answer=_answer(tagged["answer"].source),
                instructor=_markdown(tagged["instructor"]),
                typical=tagged["prediction"].metadata.get("typical", {}),
                file=f"notebooks/{path.name}",
            )
        )
    return tuple(found)


def _answer(source: str) -> str:
    """The ``ANSWER = \"\"\"...\"\"\"`` string of an answer cell, as one paragraph per line run."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "ANSWER":
            return node.value.value.strip()
    raise ValueError("an answer cell without ANSWER = '''...'''")


def exercise(lesson: Lesson) -> str:
    """One exercise of docs/exercises.md: question, commands, the answer folded away."""
    return "\n\n".join(
        [
            f"## {lesson.number}. {lesson.title}",
            lesson.question,
            lesson.commands,
            f"<details><summary>Answer</summary>\n\n{lesson.answer}\n\n</details>",
        ]
    )


def key(lesson: Lesson) -> str:
    """One lesson of docs/answer-key.md: the answer, a typical prediction, the notes."""
    typical = ", ".join(f"`{name} = {value!r}`" for name, value in lesson.typical.items())
    return "\n\n".join(
        [
            f"## {lesson.number}. {lesson.title} (`{lesson.file}`)",
            f"**Question.** {lesson.question}",
            f"**Answer.** {lesson.answer}",
            f"**A typical prediction**, the one the test suite runs the notebook with: {typical}.",
            lesson.instructor.removeprefix("**For the instructor.** "),
        ]
    )


BLOCKS = {
    **{f"exercise-{lesson.name}": (lambda le=lesson: exercise(le)) for lesson in lessons()},
    **{f"key-{lesson.name}": (lambda le=lesson: key(le)) for lesson in lessons()},
}


def quotes() -> list[Quote]:
    """How many exercises the page introduces: one per notebook."""
    count = str(len(lessons()))
    return [
        ("docs/exercises.md", "Short exercises for a systems course ({} in all)", (count,)),
        ("docs/exercises.md", "They are the questions of the {} classroom notebooks", (count,)),
    ]


if __name__ == "__main__":
    for lesson in lessons():
        print(exercise(lesson), end="\n\n")
