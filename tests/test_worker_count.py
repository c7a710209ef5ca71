"""Local worker processes when the machine cannot tell how many cores it has.

``os.cpu_count()`` returns None then; the default is one worker, and the
bound on ``--workers`` is taken over that one core.
"""

from __future__ import annotations

import os
from types import ModuleType

import pytest

from models.errors import ScenarioError
from sim.sweep import cluster, workers


@pytest.fixture
def unknown_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)


@pytest.mark.parametrize("module", [cluster, workers], ids=["sweep", "replications"])
@pytest.mark.usefixtures("unknown_cores")
def test_an_unknown_core_count_gives_one_worker(module: ModuleType) -> None:
    assert module.default_workers() == 1


@pytest.mark.usefixtures("unknown_cores")
def test_the_workers_bound_holds_when_the_core_count_is_unknown() -> None:
    cluster.check_workers(cluster.MAX_WORKERS_PER_CORE)
    with pytest.raises(ScenarioError, match=r"--workers = 5: at most 4 \(4 per core, 1 cores\)"):
        cluster.check_workers(cluster.MAX_WORKERS_PER_CORE + 1)
