"""The event loop's compiled modules (``sim.des.compiled``): the same records as the
``.py`` modules, bit for bit, and never used when they are older than their sources."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import warnings
from pathlib import Path

import pure_engine
import pytest
from test_kernel import (
    CASES,
    assert_same_replication,
    assert_same_rollouts,
    case,
    one_agent_scenario,
)

import sim.des
from sim.des import compiled
from sim.des.runners import simulate, simulate_fleet
from sim.turn.transports import Transport

needs_compiled = pytest.mark.skipif(not sim.des.COMPILED, reason="no compiled event loop")


def test_the_compiled_modules_run_where_the_build_must_make_them() -> None:
    """CI builds them (``.ci/run`` sets ``LOOPBUDGET_REQUIRE_COMPILED``): a failed build,
    which the install lets pass, fails here."""
    if not os.environ.get("LOOPBUDGET_REQUIRE_COMPILED"):
        pytest.skip("LOOPBUDGET_REQUIRE_COMPILED is not set")
    assert sim.des.COMPILED
    assert compiled.state(compiled.HERE) == "current"
    for module in compiled.MODULES:
        loaded = sys.modules[f"sim.des.{module}"].__file__
        assert loaded is not None and not loaded.endswith(".py"), module


@needs_compiled
@pytest.mark.parametrize("transport", [Transport.HTTP, Transport.WS])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_compiled_fleet_replication_is_the_pure_ones_bit_for_bit(
    name: str, transport: Transport
) -> None:
    ours = simulate_fleet(case(name), transport, 1, trace_rollouts=3)
    assert ours.records.count > 0
    assert_same_replication(ours, pure_engine.fleet(name, transport))


@needs_compiled
def test_one_compiled_agent_is_the_pure_one_bit_for_bit() -> None:
    ours = simulate(one_agent_scenario(), Transport.HTTP, 300, reference=True)
    assert_same_rollouts(ours, pure_engine.one_agent())


def _package(tmp_path: Path) -> Path:
    """A copy of the compiled modules' sources, with stand-ins for the built files."""
    directory = tmp_path / "engine"
    directory.mkdir()
    for name in compiled.SOURCES:
        shutil.copy(compiled.HERE / name, directory / name)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for module in compiled.MODULES:
        (directory / f"{module}{suffix}").write_bytes(b"built from the sources beside it")
    return directory


def test_built_modules_are_current_only_while_their_sources_and_files_are_recorded(
    tmp_path: Path,
) -> None:
    directory = _package(tmp_path)
    assert compiled.state(directory) == "stale"  # built, but no record
    compiled.write_record(directory)
    assert compiled.state(directory) == "current"
    pools = directory / "pools.py"
    pools.write_text(pools.read_text() + "\n# an edit after the build\n")
    assert compiled.state(directory) == "stale"
    compiled.write_record(directory)
    assert compiled.state(directory) == "current"
    for module in compiled.MODULES:  # unpacked elsewhere, at other times: the same build
        built = compiled.built_file(directory, module)
        assert built is not None
        os.utime(built, ns=(0, 0))
    assert compiled.state(directory) == "current"
    kernel = compiled.built_file(directory, "kernel")
    assert kernel is not None
    kernel.write_bytes(b"a module built by hand, the record not rewritten")
    assert compiled.state(directory) == "stale"
    compiled.remove_built(directory)
    assert compiled.state(directory) == "none"


def test_stale_modules_give_way_to_the_sources_with_a_warning(tmp_path: Path) -> None:
    directory = _package(tmp_path)
    compiled.write_record(directory)
    (directory / "kernel.pyx").write_text("# edited\n")
    before = list(sys.meta_path)
    try:
        with pytest.warns(RuntimeWarning, match="older than their sources"):
            assert not compiled.choose("stale_engine", directory)
        finder = sys.meta_path[0]
        spec = finder.find_spec("stale_engine.kernel", None)
        assert spec is not None and spec.origin == str(directory / "kernel.py")
        assert finder.find_spec("stale_engine.engine", None) is None
    finally:
        sys.meta_path[:] = before


def test_current_modules_are_used_unless_pure_python_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(compiled.PURE_PYTHON_VARIABLE, raising=False)
    directory = _package(tmp_path)
    compiled.write_record(directory)
    before = list(sys.meta_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert compiled.choose("current_engine", directory)
            assert sys.meta_path == before
            monkeypatch.setenv(compiled.PURE_PYTHON_VARIABLE, "1")
            assert not compiled.choose("current_engine", directory)
        spec = sys.meta_path[0].find_spec("current_engine.fleet_turn", None)
        assert spec is not None and spec.origin == str(directory / "fleet_turn.py")
    finally:
        sys.meta_path[:] = before
