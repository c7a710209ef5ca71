"""The phases of a turn the emulated server runs, and how long each stage holds its pool.

The client builds, connects, uploads and downloads itself; a compaction request is a
request of its own, not a phase of the turn's."""

from __future__ import annotations

from typing import Any

from models.stages import Stage
from sim.turn.phases import JOINED_SIDES, PHASES, Phase

_SERVER_GROUPS = {"api", "safety", "inference"}
_CLIENTS_OWN = {Stage.COMPACT}
"""Server-side work the client asks for as a request of its own: a compaction request is
not a phase of the turn's request (the testbed's scenarios do not compact)."""
SERVER_PHASES: tuple[Phase, ...] = tuple(
    p
    for p in PHASES
    if any(s.group.value in _SERVER_GROUPS and s not in _CLIENTS_OWN for s in p.stages)
)
"""The phases the server runs (the client builds, connects, uploads and downloads itself)."""


def held_stage_s(costs: Any, stage_s: dict[Stage, float]) -> dict[Stage, float]:
    """Seconds each stage holds its phase's pool: a joined side holding's overrun (the
    parallel classifiers outlasting prefill) is waited for at the join, not held."""
    held = dict(stage_s)
    for side in JOINED_SIDES:
        info = side.info
        overrun = max(0.0, float(costs.side_s(side)[0]) - sum(stage_s[s] for s in info.alongside))
        held[info.stage] = max(0.0, stage_s[info.stage] - overrun)
    return held
