"""An analytic sweep's chunks evaluated together (one column form and one engine pass per
transport for many chunks): each chunk's table, each part and the totals are the same as
chunk by chunk, error rows included, and an engine that raises fails the sweep at the
chunk it comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sim.sweep import in_process
from sim.sweep.execute import chunk_tasks, run_sweep, sweep_context
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep
from sim.sweep.tasks import run_analytic_chunks, run_chunk_table


@pytest.mark.parametrize("name", ["amdahl", "turns_x_decode"])
def test_chunks_evaluated_together_give_each_chunk_its_own_table(name: str) -> None:
    sweep = load_sweep(f"sweeps/{name}.toml")
    context = sweep_context(sweep)
    chunks = [chunk[:40] for chunk in chunk_tasks(sweep)]
    together = run_analytic_chunks(context, chunks)
    assert len(together) == len(chunks)
    for chunk, table in zip(chunks, together, strict=True):
        assert table.equals(run_chunk_table(context, chunk), check_metadata=True)


MIXED_SWEEP = """
name = "mixed"
base = "codex-spark"
transports = ["http", "ws"]
points_per_part = 4
[[axes]]
path = "api.route_ms"
values = [1.0, 5.0, 20.0]
[[axes]]
path = "api.route_cached_ms"
values = [2.0, 10.0]
[[axes]]
path = "inference.decode_tps"
values = [50.0, 900, 4000.0]
"""


def test_a_sweep_with_refused_points_writes_the_same_parts_chunk_by_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of errors only, chunks with some: evaluated together or one at a time."""
    source = tmp_path / "mixed.toml"
    source.write_text(MIXED_SWEEP)
    together = run_sweep(load_sweep(source), tmp_path / "together", show_progress=False)
    monkeypatch.setattr(in_process, "EVALUATED_TOGETHER", 1)
    alone = run_sweep(load_sweep(source), tmp_path / "alone", show_progress=False)
    counts = ("rows", "runs", "failed", "first_error", "resumed", "computed")
    assert [getattr(together, c) for c in counts] == [getattr(alone, c) for c in counts]
    assert together.failed > 0
    for part in sorted((tmp_path / "alone" / "parts").iterdir()):
        assert part.read_bytes() == (tmp_path / "together" / "parts" / part.name).read_bytes()
    assert read_results(tmp_path / "together").equals(read_results(tmp_path / "alone"))


def test_a_group_that_raises_writes_the_chunks_before_the_one_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception in the engine fails the sweep at the chunk it comes from, as when each
    chunk is evaluated alone: the parts before it are written."""
    from sim.sweep import tasks

    source = tmp_path / "mixed.toml"
    source.write_text(MIXED_SWEEP.replace("points_per_part = 4", "points_per_part = 2"))
    own = tasks.expect_columns

    def failing(columns: Any, transport: Any) -> Any:
        if (columns.api.route_ms == 20.0).any():  # points 12 to 17: chunks 6 to 8
            raise RuntimeError("engine failed")
        return own(columns, transport)

    monkeypatch.setattr(tasks, "expect_columns", failing)
    with pytest.raises(RuntimeError, match="engine failed"):
        run_sweep(load_sweep(source), tmp_path / "out", show_progress=False)
    parts = sorted(p.name for p in (tmp_path / "out" / "parts").iterdir())
    assert parts == [f"part-{chunk:06d}.parquet" for chunk in range(6)]
