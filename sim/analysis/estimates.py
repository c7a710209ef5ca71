"""What a run will ask of the machine, estimated from its scenario before it starts.

Each estimate gives the run's peak memory, the turns it simulates and its
longest rollout, with how they were worked out, and ``check`` refuses a run
above a cap of ``models.limits`` with the estimate and the way to raise the
cap.  The constants are the engines' measured costs with a margin above them
(``docs/errors.md``), so an estimate errs on the high side.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from models.distributions import Distribution
from models.errors import ScenarioError
from models.limits import MEMORY, ROLLOUT_TURNS, TURNS, Cap
from models.scenario import Scenario
from models.stages import POOLS, STAGES
from models.workload import rollout_turns
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

if TYPE_CHECKING:
    pass

BLOCK_BYTES_PER_TURN = 1_600
"""A drawn block's per-turn arrays: draws, work and costs of both variants (measured 1,260
on codex-spark over WebSocket)."""
IN_FLIGHT_BYTES = 4_096
"""A fleet rollout under way: its process on the event queue, its connection and its events."""
_ROW_WIDTHS = {"stage_s": len(STAGES), "pool_wait_s": len(POOLS), "turn_ttft_s": 0}
RECORD_NUMBERS_PER_ROLLOUT = sum(
    _ROW_WIDTHS.get(name, 1)
    for name in RolloutRecords.__dataclass_fields__
    if name != "turn_records"
)
"""A rollout's recorded numbers: one per field, a row of the stage and pool-wait matrices
(its turns' TTFTs are counted per turn)."""
RECORD_BYTES_PER_ROLLOUT = 2 * RECORD_NUMBERS_PER_ROLLOUT * 8
"""A rollout's recorded numbers, twice while the blocks' records are joined."""
RECORD_BYTES_PER_TURN = 2 * 8
"""A turn's recorded TTFT (for percentiles), twice while joined."""
TRACE_BYTES_PER_TURN = 15_000
"""A traced turn: its row, its trace events and their JSON text (measured 11,700)."""
ANALYTIC_BYTES_PER_TURN = 256
"""The analytic engine, per point and turn of the longest rollout (measured 157)."""
ANALYTIC_GRID_BYTES = 64 * 2**20
"""The connection-age grid of a WebSocket point where rotation is possible (measured 52 MB)."""
TURNS_PER_REFUSAL = 0.3
"""A refused attempt (a 429, its retry-after and the next attempt) in fleet turns of
simulation time: one timeout against a turn's several (measured 0.25)."""
DES_TURNS_PER_S = 50_000
FLEET_TURNS_PER_S = 10_000
"""Rough simulation speeds on one core, for the time quoted beside a turn count."""


@dataclass(frozen=True)
class Need:
    """A run's estimated peak memory, simulated turns and longest rollout, with their basis."""

    what: str
    memory_bytes: float
    memory_basis: str
    turns: float
    turns_basis: str
    longest_turns: int
    turns_per_s: float = DES_TURNS_PER_S
    window_rollouts: float = math.inf
    """Rollouts expected to start in a fleet replication's measured window."""
    worker_bytes: float | None = None
    """What one worker holds while it runs its share (a fleet: one replication); None: the
    whole memory estimate."""
    fewer: str = "fewer rollouts, agents or turns"
    """What to ask for less of when the memory is over its cap."""


def check(need: Need) -> None:
    """Refuse a run whose estimate exceeds a cap: one line with the estimate and the way out."""
    if need.longest_turns > ROLLOUT_TURNS.limit():
        _refuse(
            need,
            ROLLOUT_TURNS,
            need.longest_turns,
            f"a rollout of up to {need.longest_turns:,} turns",
            "fewer workload.tool_calls_per_rollout",
        )
    if need.memory_bytes > MEMORY.limit():
        _refuse(
            need,
            MEMORY,
            need.memory_bytes,
            f"about {show_bytes(need.memory_bytes)} of memory ({need.memory_basis})",
            need.fewer,
        )
    if need.turns > TURNS.limit():
        minutes = need.turns / need.turns_per_s / 60
        _refuse(
            need,
            TURNS,
            need.turns,
            f"about {need.turns:,.3g} simulated turns ({need.turns_basis}; "
            f"roughly {minutes:,.0f} min at {need.turns_per_s:,.0f} turns/s)",
            "fewer rollouts, replications, agents or a shorter window",
        )


def check_run(
    what: str,
    scenario: Scenario,
    transport: Transport,
    analytic: bool,
    rollouts: int,
    traced: bool = False,
    runs: int = 1,
) -> Need:
    """``check`` the estimate of one run (``runs`` of them held at once, as compare does);
    the estimate."""
    if analytic:
        need = analytic_need(what, scenario)
    elif scenario.on_fleet:
        from sim.analysis.fleet_need import check_fleet  # it imports this module

        return check_fleet(what, scenario, transport)
    else:
        need = single_agent_need(what, scenario, rollouts, traced, runs)
    check(need)
    return need


def check_rollout_length(what: str, scenario: Scenario) -> None:
    """Refuse a scenario whose longest rollout is over its cap (before any engine lays it out)."""
    check(Need(what, 0.0, "", 0.0, "", longest_rollout_turns(scenario)))


def longest_rollout_turns(scenario: Scenario) -> int:
    """Turns of the longest rollout the tool-call distribution allows."""
    global _LAST_LONGEST
    calls, last = scenario.workload.tool_calls_per_rollout, _LAST_LONGEST
    if last[0] is not calls:  # a sweep's points share the base's distribution object
        last = _LAST_LONGEST = (calls, _longest_rollout_turns(calls))
    return last[1]


_LAST_LONGEST: tuple[object, int] = (None, 0)
"""The distribution last asked about and its answer (rebound whole: safe across threads)."""


@functools.lru_cache(maxsize=1024)
def _longest_rollout_turns(tool_calls: Distribution) -> int:
    # Kept per distribution: a sweep asks for each point, and most share the base's.
    values, probability = tool_calls.support()
    return rollout_turns(int(values[probability > 0].max()))


def mean_rollout_turns(scenario: Scenario) -> float:
    return rollout_turns(scenario.workload.tool_calls_per_rollout.mean)


def single_agent_need(
    what: str, scenario: Scenario, rollouts: int, traced: bool = False, runs: int = 1
) -> Need:
    """One agent, ``rollouts`` rollouts: one block's working set plus the records (and trace)."""
    mean = mean_rollout_turns(scenario)
    longest = longest_rollout_turns(scenario)
    block_turns = min(rollouts, BLOCK_ROLLOUTS) * mean + longest
    kept_turns = runs * rollouts * mean
    per_turn = RECORD_BYTES_PER_TURN + (TRACE_BYTES_PER_TURN if traced else 0)
    memory = (
        block_turns * BLOCK_BYTES_PER_TURN
        + runs * rollouts * RECORD_BYTES_PER_ROLLOUT
        + kept_turns * per_turn
    )
    runs_of = f"{runs} runs x " if runs > 1 else ""
    basis = f"{runs_of}{rollouts:,} rollouts x {mean:,.1f} turns"
    if traced:
        basis += f", traced at {TRACE_BYTES_PER_TURN:,} bytes per turn"
    return Need(what, memory, basis, kept_turns, basis, longest)


def analytic_need(what: str, scenario: Scenario, points: int = 1) -> Need:
    """The analytic engine: every point lays out the longest rollout turn by turn."""
    longest = longest_rollout_turns(scenario)
    return analytic_batch_need(what, points, longest)


def analytic_batch_bytes(points: int, longest_turns: int) -> int:
    """Memory of ``points`` points evaluated together, padded to the longest rollout."""
    return ANALYTIC_GRID_BYTES + points * longest_turns * ANALYTIC_BYTES_PER_TURN


def analytic_batch_need(what: str, points: int, longest_turns: int) -> Need:
    """``points`` points evaluated together, padded to the longest rollout among them."""
    memory = analytic_batch_bytes(points, longest_turns)
    basis = f"{points:,} points x {longest_turns:,} turns"
    return Need(what, memory, basis, 0.0, basis, longest_turns)


def _refuse(need: Need, cap: Cap, needed: float, estimate: str, fewer: str) -> None:
    raise ScenarioError(
        f"{need.what}: {estimate} is over the {cap.what} cap of {_amount(cap, cap.limit())}; "
        f"ask for {fewer}, or raise the cap with {cap.how_to_raise(needed)}"
    )


def _amount(cap: Cap, value: float) -> str:
    return show_bytes(value) if cap is MEMORY else f"{value:,.0f} {cap.unit}"


def show_bytes(value: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:,.1f} {unit}"
    return f"{value:,.0f} bytes"
