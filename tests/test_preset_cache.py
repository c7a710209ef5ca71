"""Scenario files are parsed once per process while their path, time and size hold."""

from __future__ import annotations

import os
from pathlib import Path

from models import loading
from models.loading import raw_scenario


def write_aged(path: Path, text: str, age_s: float) -> None:
    path.write_text(text)
    stamp = path.stat().st_mtime - age_s
    os.utime(path, (stamp, stamp))


def test_a_cached_table_is_a_copy_the_caller_may_change() -> None:
    first = raw_scenario("codex-spark")
    first["network"]["rtt_ms"] = -1.0
    assert raw_scenario("codex-spark")["network"]["rtt_ms"] != -1.0


def test_a_changed_file_or_parent_is_read_again(tmp_path: Path) -> None:
    parent = tmp_path / "parent.toml"
    child = tmp_path / "child.toml"
    write_aged(parent, 'extends = "codex-spark"\n[network]\nrtt_ms = 11.0\n', 60)
    write_aged(child, 'extends = "parent.toml"\nname = "child"\n', 60)
    assert raw_scenario(str(child))["network"]["rtt_ms"] == 11.0
    assert str(child.resolve()) in {key[0] for key in loading._RAW_CACHE}
    write_aged(parent, 'extends = "codex-spark"\n[network]\nrtt_ms = 22.0\n', 30)
    assert raw_scenario(str(child))["network"]["rtt_ms"] == 22.0


def test_a_file_just_written_is_not_cached(tmp_path: Path) -> None:
    """Within one tick of the file system's clock a rewrite could keep the same time."""
    path = tmp_path / "fresh.toml"
    path.write_text('extends = "codex-spark"\n[network]\nrtt_ms = 11.0\n')
    raw_scenario(str(path))
    assert str(path.resolve()) not in {key[0] for key in loading._RAW_CACHE}
    path.write_text('extends = "codex-spark"\n[network]\nrtt_ms = 12.0\n')
    assert raw_scenario(str(path))["network"]["rtt_ms"] == 12.0
