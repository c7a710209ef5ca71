"""The classroom notebooks run from top to bottom, each in a fresh kernel, with a typical
student's prediction filled in; their answer cells raise if the model disagrees with the
stated answer.  The notebooks are jupytext percent scripts in notebooks/."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from sim.api import lessons

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.py"))
TIMEOUT_S = 120


def with_predictions(notebook):
    """The notebook with each prediction cell's ``name = None`` set to its typical value."""
    for cell in notebook.cells:
        for name, value in cell.metadata.get("typical", {}).items():
            line = re.compile(rf"^{name} = None\b", re.MULTILINE)
            assert line.search(cell.source), f"no `{name} = None` in a prediction cell"
            cell.source = line.sub(f"{name} = {value!r}", cell.source)
    return notebook


def test_there_are_seven_lessons_each_with_every_part() -> None:
    assert len(NOTEBOOKS) == 7
    for path in NOTEBOOKS:
        tags = [t for cell in jupytext.read(path).cells for t in cell.metadata.get("tags", [])]
        for tag in ("question", "commands", "prediction", "answer", "instructor"):
            assert tag in tags, f"{path.name}: no {tag} cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebook_runs_and_its_answer_is_the_models(path: Path, tmp_path: Path) -> None:
    notebook = with_predictions(jupytext.read(path))
    kernel = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel"))
    client = NotebookClient(
        notebook, km=kernel, timeout=TIMEOUT_S, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", [])]
    printed = "".join(output.get("text", "") for output in outputs)
    checks = sum(cell.source.count("lessons.check(") for cell in notebook.cells)
    assert printed.count("you predicted") == checks, "each check's feedback shows once"
    assert "No prediction yet" not in printed
    assert not re.search(r"\de[+-]\d", printed), "numbers without exponents"
    stray = [output for output in outputs if output["output_type"] != "stream"]
    assert stray == [], "a cell shows only what it prints"


def written_handouts(out: Path) -> dict[str, str]:
    """The students' copies as handout.py writes them: the text of each, by lesson."""
    spec = importlib.util.spec_from_file_location("handout", NOTEBOOKS[0].with_name("handout.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.handout(out)
    assert [p.stem for p in written] == [p.stem for p in NOTEBOOKS]
    return {
        path.stem: "\n".join(c.source for c in nbformat.read(path, 4).cells) for path in written
    }


def tagged_source(path: Path, tag: str) -> str:
    return "\n".join(
        c.source for c in jupytext.read(path).cells if tag in c.metadata.get("tags", [])
    )


def stated_numbers(path: Path) -> set[str]:
    """The numbers the answer cell states and checks against the model: the values in the
    ``{}`` slots of each ``lessons.stated`` template, as the answer writes them."""
    source = tagged_source(path, "answer")
    answer = source.split('"""')[1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "stated":
            template = ast.literal_eval(node.args[1])
            values = lessons.slots(answer, template)
            assert values, f"{path.stem}: the answer says {template!r}"
            found.update(value.rstrip(".,") for value in values)
    return found


def numbers(text: str) -> set[str]:
    """The numbers a text writes, as written (``1,374``, ``24.4%``, ``0.5``)."""
    return {match.rstrip(".,") for match in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?%?", text)}


def test_the_handout_leaves_out_the_answers(tmp_path: Path) -> None:
    for stem, text in written_handouts(tmp_path).items():
        assert "ANSWER" not in text and "For the instructor" not in text
        assert "lessons.check" in text, stem


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_handout_cell_gives_the_answer_away(path: Path, tmp_path: Path) -> None:
    """Neither a number the answer finds (a value it checks against the model that the
    question does not give) nor both ends of a range the answer places it in appear
    anywhere in the students' copy."""
    shown = numbers(written_handouts(tmp_path)[path.stem])
    found = stated_numbers(path) - numbers(tagged_source(path, "question"))
    assert found, "the answer checks numbers of its own"
    assert found & shown == set(), f"{path.stem}: the handout quotes the answer"
    answer = tagged_source(path, "answer").split('"""')[1]
    for low, high in re.findall(r"between ([\d,.]+) and ([\d,.]+)", answer, re.IGNORECASE):
        assert not {low, high} <= shown, f"{path.stem}: the handout brackets the answer"
