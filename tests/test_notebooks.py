"""The classroom notebooks run from top to bottom, each in a fresh kernel, with a typical
student's prediction filled in; their answer cells raise if the model disagrees with the
stated answer.  The notebooks are jupytext percent scripts in notebooks/."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

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
    printed = "".join(
        output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", [])
    )
    assert "you predicted" in printed
    assert "No prediction yet" not in printed


def test_the_handout_leaves_out_the_answers(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("handout", NOTEBOOKS[0].with_name("handout.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.handout(tmp_path)
    assert [p.stem for p in written] == [p.stem for p in NOTEBOOKS]
    for path in written:
        text = path.read_text()
        assert "ANSWER" not in text and "For the instructor" not in text
        assert "prediction" in text and "lessons.check" in text
