"""What a sweep's rows depend on: every resolved point, and each part's own record of its runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from models import scenario as scenario_module
from models.errors import ScenarioError
from models.hardware import hardware_profiles
from sim.sweep.design import expand
from sim.sweep.execute import run_sweep
from sim.sweep.fingerprint import CHUNK_KEY, RUNS_KEY, point_hash, resolve
from sim.sweep.store import read_results
from sim.sweep.sweepfile import load_sweep

BAD = Path(__file__).parent / "data" / "bad"
EVEN = BAD / "sweep-even.toml"
HARDWARE_AXIS = """
name = "hardware"
base = "codex-spark"
transports = ["http"]

[[axes]]
path = "inference.hardware"
values = ["cerebras-class", "gpu-flagship"]

[[axes]]
path = "api.route_cached_ms"
values = [1.0, 1000.0]
"""


def edit_profile(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    profiles = dict(hardware_profiles())
    profiles[name] = profiles[name].model_copy(update={"overhead_ms": 500.0})
    monkeypatch.setattr(scenario_module, "hardware_profiles", lambda: profiles)


def test_the_fingerprint_follows_every_point_and_only_what_changes_a_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "hardware.toml"
    source.write_text(HARDWARE_AXIS)
    sweep = load_sweep(source)
    before = resolve(sweep, "1")
    again = resolve(sweep, "1")
    assert again.fingerprint == before.fingerprint
    assert again.hashes.tolist() == before.hashes.tolist()
    assert resolve(sweep, "2").fingerprint != before.fingerprint
    # route_cached_ms above route_ms: validation refuses those points; their hash says so
    refused = [h for h in before.hashes.tolist() if h.startswith(b"!")]
    assert len(refused) == 2 and len(set(refused)) == 1
    assert len(set(before.hashes.tolist())) == 3
    # a profile only an axis value names (not the base's) changes the fingerprint too
    edit_profile(monkeypatch, "gpu-flagship")
    after = resolve(sweep, "1")
    assert after.fingerprint != before.fingerprint
    changed = [
        i for i, (a, b) in enumerate(zip(before.hashes, after.hashes, strict=True)) if a != b
    ]
    assert changed == [2]


@pytest.mark.parametrize("name", ["hardware", "tornado"])
def test_the_fingerprint_hashes_each_point_validated_whole(name: str, tmp_path: Path) -> None:
    """``resolve`` validates points against the base (the cheap way); every hash, refused
    points' included, is the hash of the point validated whole."""
    if name == "hardware":
        source = tmp_path / "hardware.toml"
        source.write_text(HARDWARE_AXIS)
    else:
        source = Path("sweeps") / f"{name}.toml"
    sweep = load_sweep(source)
    whole = [point_hash(sweep.base_raw, point) for point in expand(sweep.file)]
    assert resolve(sweep, "1").hashes.tolist() == whole


def test_each_part_records_its_chunk_and_the_hashes_its_rows_report(tmp_path: Path) -> None:
    run_sweep(load_sweep(EVEN), tmp_path / "out", workers=0)
    table = read_results(tmp_path / "out")
    by_point = dict(
        zip(table["point"].to_pylist(), table["scenario_hash"].to_pylist(), strict=True)
    )
    for chunk in (0, 1):
        metadata = pq.read_schema(tmp_path / "out" / "parts" / f"part-{chunk:06d}.parquet").metadata
        assert metadata[CHUNK_KEY] == str(chunk).encode()
        runs = json.loads(metadata[RUNS_KEY])
        assert [run[0] for run in runs] == [2 * chunk, 2 * chunk + 1]
        assert all(by_point[point] == recorded for point, _, recorded in runs)


def test_a_part_of_another_sweep_of_the_same_shape_is_recomputed(tmp_path: Path) -> None:
    other = tmp_path / "other.toml"
    other.write_text(EVEN.read_text().replace("120.0", "150.0"))
    run_sweep(load_sweep(other), tmp_path / "theirs", workers=0)
    run_sweep(load_sweep(EVEN), tmp_path / "ours", workers=0)
    expected = read_results(tmp_path / "ours")
    part = Path("parts") / "part-000001.parquet"
    shutil.copy(tmp_path / "theirs" / part, tmp_path / "ours" / part)
    with pytest.raises(ScenarioError, match="written by another sweep"):
        read_results(tmp_path / "ours")
    outcome = run_sweep(load_sweep(EVEN), tmp_path / "ours", workers=0, resume=True)
    assert (outcome.damaged, outcome.resumed, outcome.computed) == (1, 2, 2)
    assert read_results(tmp_path / "ours").equals(expected)


def test_a_resume_after_a_profile_edit_is_refused_and_names_the_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "hardware.toml"
    source.write_text(HARDWARE_AXIS)
    run_sweep(load_sweep(source), tmp_path / "out", workers=0)
    edit_profile(monkeypatch, "gpu-flagship")
    with pytest.raises(ScenarioError, match="point 2 resolves to scenario"):
        run_sweep(load_sweep(source), tmp_path / "out", workers=0, resume=True)
