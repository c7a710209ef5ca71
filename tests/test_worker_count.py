"""Local worker processes when the machine cannot tell how many cores it has.

``os.cpu_count()`` returns None then; the default is one worker, and the
bound on ``--workers`` is taken over that one core.
"""

from __future__ import annotations

import os

import pytest

from models.errors import ScenarioError
from sim.analysis import workers_need


@pytest.fixture
def unknown_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)


@pytest.mark.usefixtures("unknown_cores")
def test_an_unknown_core_count_gives_one_worker() -> None:
    assert workers_need.usable_cores() == 1
    assert workers_need.fitting_workers(0.0) == 1


@pytest.mark.usefixtures("unknown_cores")
def test_the_workers_bound_holds_when_the_core_count_is_unknown() -> None:
    most = workers_need.MAX_WORKERS_PER_CORE
    workers_need.check_workers("--workers", most, 0.0)
    with pytest.raises(ScenarioError, match=r"--workers = 5: at most 4 \(4 per core, 1 cores\)"):
        workers_need.check_workers("--workers", most + 1, 0.0)
