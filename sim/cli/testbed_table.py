"""The testbed's report as tables: measured beside simulated, every column explained below
the table, "-" for what was not simulated, labels that wrap instead of being cut, rows
outside the tolerance the testbed tests assert flagged with the likely cause (the load on
the machine), and new-connection counts that differ explained."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from sim.testbed.results import Key, LiveResult, Side, TransportResult

ONE_AGENT_TOLERANCE = {Key.E2E_MEAN: 0.05, Key.TTFT_MEAN: 0.10}
FLEET_TOLERANCE = {Key.E2E_MEAN: 0.10, Key.E2E_P95: 0.15}
"""The relative errors the testbed tests assert (tests/test_testbed_single_agent.py,
tests/test_testbed_fleet.py); a row beyond them is flagged."""
BUSY_LOAD_PER_CORE = 1.0
"""A load average above this per core makes the run's timings unreliable: timers end late
and the SDK's CPU cost moves within seconds (docs/testbed.md, "The noise floor")."""
CONNECTIONS_APART = 0.5
"""New connections per rollout, measured against simulated, beyond which the table says why
(the keep-alive test's tolerance)."""
NOT_SIMULATED = "-"
_ERROR_NAMES = {Key.E2E_MEAN: "e2e mean", Key.E2E_P95: "e2e p95", Key.TTFT_MEAN: "TTFT mean"}


@dataclass(frozen=True)
class MachineLoad:
    """The 1-minute load average when the run started and when it ended, and the cores."""

    start: float
    end: float
    cores: int

    @property
    def busy(self) -> bool:
        return max(self.start, self.end) > BUSY_LOAD_PER_CORE * self.cores

    def text(self) -> str:
        return (
            f"load average {self.start:.2f} at the start and {self.end:.2f} at the end on "
            f"{self.cores} cores"
        )


def load_average() -> float:
    """The machine's 1-minute load average."""
    return os.getloadavg()[0]


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True)
class Row:
    label: str
    pick: Callable[[Side], float]
    scale: float
    error: Key | None
    """The key of its relative error (None: the row has none)."""


ROWS = (
    Row("e2e mean (s)", lambda x: x.e2e_mean_s, 1.0, Key.E2E_MEAN),
    Row("e2e p95 (s)", lambda x: x.e2e_p95_s, 1.0, Key.E2E_P95),
    Row("TTFT mean (ms)", lambda x: x.ttft_mean_s, 1e3, Key.TTFT_MEAN),
    Row("TTFT p95 (ms)", lambda x: x.ttft_p95_s, 1e3, None),
    Row("requests / rollout", lambda x: x.requests_per_rollout, 1.0, None),
    Row("new connections / rollout", lambda x: x.connections_per_rollout, 1.0, None),
    Row("cache misses / rollout", lambda x: x.cache_misses_per_rollout, 1.0, None),
)


def cell(value: float | None, fmt: str = ".4g") -> str:
    """A number, or "-" where a side has none (NaN: nothing of the kind was simulated)."""
    if value is None or math.isnan(value):
        return NOT_SIMULATED
    return format(value, fmt)


def stage_label(stage: str) -> str:
    """A budget row's label; merged stages (``client_build+connect+upload``) get spaces, so
    a narrow table wraps the label between stages rather than cutting it."""
    return f"{stage.replace('+', ' + ')} (s/rollout)"


def tolerances(result: LiveResult) -> dict[Key, float]:
    return FLEET_TOLERANCE if result.agents > 1 else ONE_AGENT_TOLERANCE


def transport_table(title: str, entry: TransportResult, allowed: dict[Key, float]) -> Table:
    """Measured, simulated (client measured in the run), its error, and the prediction
    (client calibrated beforehand); then the budget per stage and the pools."""
    m, s, p = entry.measured, entry.simulated, entry.predicted
    table = Table("", "measured", "simulated", "rel. error", "predicted", title=title)
    table.title_justify = "left"
    table.columns[0].overflow = "fold"
    errors = entry.rel_errors
    for row in ROWS:
        error = "" if row.error is None else cell(errors[row.error] * 100, "+.1f") + "%"
        if row.error in allowed and abs(errors[row.error]) > allowed[row.error]:
            error += " !"
        table.add_row(
            row.label,
            cell(row.pick(m) * row.scale),
            cell(row.pick(s) * row.scale),
            error,
            "" if p is None else cell(row.pick(p) * row.scale),
        )
    for stage, seconds in m.budget_s.items():
        simulated = s.budget_s.get(stage)
        if seconds or simulated:
            table.add_row(f"  {stage_label(stage)}", cell(seconds, ".4f"), cell(simulated, ".4f"))
    for pool, busy in m.utilization.items():
        simulated = s.utilization.get(pool)
        shown = NOT_SIMULATED if simulated is None else f"{simulated:.1%}"
        table.add_row(f"  utilization {pool}", f"{busy:.1%}", shown)
    return table


def footnote(allowed: dict[Key, float]) -> str:
    limits = ", ".join(f"{_ERROR_NAMES[key]} {share:.0%}" for key, share in allowed.items())
    return (
        "measured: the official openai SDK against the emulated API on loopback. simulated: "
        "the DES of the same scenario on the same seeded rollouts, with the client's costs "
        "fitted to this run's own turns. rel. error: (measured - simulated) / simulated; ! "
        f"beyond what the testbed tests allow ({limits}). predicted: the DES with the client "
        "calibrated beforehand on separate rollouts (reported, not asserted). "
        f"{NOT_SIMULATED}: not simulated."
    )


def flagged(result: LiveResult) -> list[str]:
    """The transports with a row beyond the tolerance."""
    allowed = tolerances(result)
    return [
        name
        for name, entry in result.transports.items()
        if any(abs(entry.rel_errors[key]) > share for key, share in allowed.items())
    ]


def connection_note(name: str, entry: TransportResult) -> str | None:
    measured = entry.measured.connections_per_rollout
    simulated = entry.simulated.connections_per_rollout
    if math.isnan(measured) or math.isnan(simulated):
        return None
    if abs(measured - simulated) <= CONNECTIONS_APART:
        return None
    return (
        f"{name}: {measured:.3g} new connections a rollout measured against {simulated:.3g} "
        "simulated. The simulation opens one when a rollout starts and one after each idle "
        "gap longer than the keep-alive timeout (client.keepalive_idle_s, time-scaled); the "
        "SDK checks its pool only after building the next request, so the gap it sees also "
        "holds that build, which is not time-scaled and longest when the whole history is "
        'resent (docs/testbed.md, "What the testbed found").'
    )


def notes(result: LiveResult, load: MachineLoad) -> list[str]:
    """What the tables need said: the columns, the machine's load, the flagged rows and why,
    connection counts that differ."""
    lines = [footnote(tolerances(result))]
    outside = flagged(result)
    if load.busy:
        lines.append(
            f"warning: {load.text()}, above {BUSY_LOAD_PER_CORE:g} per core: timers end late "
            "and the SDK's CPU cost moves, so this run's timings are unreliable."
        )
    if outside:
        cause = (
            "likely the machine's load (above)"
            if load.busy
            else f"not the machine's load ({load.text()}); see timer_lateness_s in --json"
        )
        lines.append(f"! beyond tolerance in {', '.join(outside)}: {cause}.")
    lines += [
        note
        for name, entry in result.transports.items()
        if (note := connection_note(name, entry)) is not None
    ]
    return lines


def network_line(network: dict[str, Any]) -> str:
    """Which network the run had: the round trip asked for and the one measured over it."""
    line = f"network: {network['mode']}, round trip {network['rtt_ms']:g} ms asked"
    if network.get("measured_rtt_ms") is not None:
        line += f", {network['measured_rtt_ms']:.1f} ms measured over the link (ping)"
    return line + (f"; {network['note']}" if network.get("note") else "")


def print_result(console: Console, result: LiveResult, load: MachineLoad) -> None:
    """The network, each transport's table and counts, the reduction, then the notes at the
    tables' width."""
    head = f"{result.spec}: time scale {result.time_scale:g}"
    if result.agents > 1:
        head += f", {result.agents} agents"
    if result.network:
        console.print(network_line(result.network), markup=False, highlight=False)
    allowed = tolerances(result)
    widths = []
    for name, entry in result.transports.items():
        table = transport_table(f"{head}: {name}", entry, allowed)
        widths.append(console.measure(table).maximum)
        console.print(table)
        console.print(f"{name}: {entry.rollouts} rollouts measured, {entry.errors} errors")
        if entry.observed.get("turn_limited"):
            console.print(
                f"{name}: {entry.observed['turn_limited']:.0f} rollouts stopped at the turn limit "
                "(the server still asked for tools; --max-turns)",
                style="bold",
            )
    measured, simulated = result.reduction(Key.MEASURED), result.reduction(Key.SIMULATED)
    if measured is not None and simulated is not None:
        console.print(
            f"http -> ws end-to-end reduction: measured {measured:.1%}, simulated "
            f"{simulated:.1%} ({(measured - simulated) * 100:+.1f} points)",
            style="bold",
        )
    width = min(console.width, max(widths, default=console.width))
    for note in notes(result, load):
        console.print(note, width=width, markup=False, highlight=False)
