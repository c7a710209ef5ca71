"""The testbed's table as a reader meets it: columns explained, "-" for what was not
simulated, labels wrapped rather than cut, rows beyond the tests' tolerance flagged with
the machine's load as the likely cause, differing connection counts explained."""

from __future__ import annotations

import math

import test_testbed_fleet
import test_testbed_single_agent
from rich.console import Console

from sim.cli.testbed_table import (
    FLEET_TOLERANCE,
    ONE_AGENT_TOLERANCE,
    MachineLoad,
    print_result,
)
from sim.testbed.results import Key, LiveResult, Side, TransportResult

IDLE = MachineLoad(0.3, 0.5, 2)
BUSY = MachineLoad(2.5, 3.1, 2)


def side(e2e_s: float, connections: float, misses: float) -> Side:
    return Side(
        e2e_mean_s=e2e_s,
        e2e_p95_s=e2e_s * 1.5,
        ttft_mean_s=0.4,
        ttft_p95_s=0.6,
        connections_per_rollout=connections,
        cache_misses_per_rollout=misses,
        recovery_s=math.nan,
        budget_s={"client_build+connect+upload": 0.8, "safety": 4.8, "tool": 5.1},
    )


def result(measured_e2e_s: float, measured_connections: float = 1.0) -> LiveResult:
    entry = TransportResult(
        transport="http-full",
        rollouts=4,
        measured=side(measured_e2e_s, measured_connections, 0.0),
        simulated=side(20.0, 1.0, math.nan),
    )
    return LiveResult("codex-spark", 0.1, {}, {"http-full": entry})


def printed(live: LiveResult, load: MachineLoad, width: int = 70) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    print_result(console, live, load)
    return console.export_text()


def test_the_tolerances_are_those_the_testbed_tests_assert() -> None:
    assert ONE_AGENT_TOLERANCE == {
        Key.E2E_MEAN: test_testbed_single_agent.E2E_TOLERANCE,
        Key.TTFT_MEAN: test_testbed_single_agent.TTFT_TOLERANCE,
    }
    assert FLEET_TOLERANCE == {
        Key.E2E_MEAN: test_testbed_fleet.E2E_MEAN_TOLERANCE,
        Key.E2E_P95: test_testbed_fleet.E2E_P95_TOLERANCE,
    }


def test_columns_explained_dashes_for_what_was_not_simulated_and_labels_whole() -> None:
    text = printed(result(20.4), IDLE)
    assert "nan" not in text.lower()
    misses = next(line for line in text.splitlines() if "cache misses" in line)
    assert misses.split("│")[3].strip() == "-"
    assert "…" not in text and "..." not in text
    assert "client_build +" in text and "connect + upload" in text, "wrapped, not cut"
    assert "predicted: the DES with the client calibrated beforehand" in " ".join(text.split())
    table_width = max(len(line.rstrip()) for line in text.splitlines() if "│" in line)
    assert max(len(line.rstrip()) for line in text.splitlines()) <= table_width
    assert "% !" not in text and "beyond tolerance in" not in text and "warning" not in text


def test_a_row_beyond_tolerance_is_flagged_with_the_machines_load() -> None:
    busy = " ".join(printed(result(21.6), BUSY).split())
    assert "+8.0% !" in busy
    assert "warning: load average 2.50 at the start and 3.10 at the end on 2 cores" in busy
    assert "! beyond tolerance in http-full: likely the machine's load" in busy
    idle = " ".join(printed(result(21.6), IDLE).split())
    assert "warning" not in idle
    assert "not the machine's load (load average 0.30 at the start" in idle


def test_a_busy_machine_is_named_even_when_every_row_holds() -> None:
    text = " ".join(printed(result(20.2), BUSY).split())
    assert "warning: load average" in text and "beyond tolerance" not in text


def test_connection_counts_that_differ_are_explained() -> None:
    text = " ".join(printed(result(20.2, measured_connections=3.25), IDLE).split())
    assert "http-full: 3.25 new connections a rollout measured against 1 simulated" in text
    assert "keep-alive" in text
    assert "new connections a rollout measured" not in " ".join(printed(result(20.2), IDLE).split())
