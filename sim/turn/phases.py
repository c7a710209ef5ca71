"""A turn's path through the pools, derived from the stage table.

Consecutive stages that hold the same pool (or none) form a phase: the fleet
takes the pool once, waits out the phase's stages in one timeout and lets the
pool go.  A pool served from inside another (the state store, read by a busy
API worker) is a nested step of its outer pool's phase.  The client's tool
runs between requests and belongs to no phase; the download that ends a
request is the last phase, which holds no pool.  A side holding (the side
table) asks for its pool when the phase that starts with its stage starts; a
joined one (the parallel classifiers) is waited for inside that phase.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from models.costs import TurnCosts
from models.in_place import total
from models.stages import SIDES, STAGES, Pool, Side, Stage
from models.work import Work


@dataclass(frozen=True)
class Phase:
    """Consecutive stages that hold ``pool`` (None: no pool), with at most one nested pool."""

    pool: Pool | None
    stages: tuple[Stage, ...]
    inner: Pool | None = None
    """A pool held by some of the stages while ``pool`` stays held."""

    @property
    def inner_stages(self) -> tuple[Stage, ...]:
        return tuple(stage for stage in self.stages if self.inner and stage.pool is self.inner)

    @property
    def before_first_token(self) -> bool:
        return self.stages[0].info.before_first_token


def _outer(stage: Stage) -> Pool | None:
    pool = stage.pool
    return pool.held_within or pool if pool is not None else None


def _phases() -> tuple[Phase, ...]:
    # The queue stage is what the fleet records as waiting; the tool is between requests.
    path = [stage for stage in STAGES if stage not in (Stage.QUEUE, Stage.TOOL)]
    runs: list[list[Stage]] = []
    for stage in path:
        if runs and _outer(runs[-1][-1]) is _outer(stage):
            runs[-1].append(stage)
        else:
            runs.append([stage])
    phases = []
    for run in runs:
        inner = {stage.pool for stage in run if stage.pool is not None} - {_outer(run[0])}
        if len(inner) > 1:
            raise ValueError(f"a phase holds more than one nested pool: {sorted(inner)}")
        phases.append(Phase(_outer(run[0]), tuple(run), next(iter(inner), None)))
    return tuple(phases)


PHASES: tuple[Phase, ...] = _phases()
"""The phases of a request, in order."""

BATCHED: tuple[Stage, ...] = (Stage.DECODE,)
"""Stages whose rate falls with the batch on their inference replica
(``capacity.decode_slowdown_per_stream``); the rest of a phase runs at its own pace."""


def _side_phase(side: Side) -> int:
    info = side.info
    index = next(i for i, p in enumerate(PHASES) if p.stages[0] is info.starts_with)
    if info.joined_before is not None:
        phase = PHASES[index]
        if info.joined_before not in phase.stages or any(s in BATCHED for s in info.alongside):
            raise ValueError(f"{side} must be joined inside its phase, before its batched stages")
    return index


SIDE_PHASE: dict[Side, int] = {side: _side_phase(side) for side in SIDES}
"""The phase whose start each side holding starts with."""

# What both engines and the emulator rely on: a request opens and closes with phases that
# hold no pool, the parallel classifiers join the inference phase, and overlapped post
# work starts with the download (the last phase).
if (
    SIDE_PHASE[Side.OVERLAPPED_POST] != len(PHASES) - 1
    or PHASES[SIDE_PHASE[Side.PARALLEL_SAFETY]].pool is not Pool.INFERENCE
    or PHASES[0].pool is not None
    or PHASES[-1].pool is not None
):
    raise ValueError(
        "the stage table must open and close a request with phases that hold no pool, "
        "join the parallel classifiers on the inference phase and start overlapped post "
        "work with the download"
    )

JOINED_SIDES: tuple[Side, ...] = tuple(s for s in SIDES if s.info.joined_before is not None)
"""Side holdings the turn waits for (their waits can delay it)."""

WAIT_PHASES: tuple[Phase, ...] = (
    tuple(p for p in PHASES if p.pool is not None)
    + tuple(Phase(p.inner, p.inner_stages) for p in PHASES if p.inner is not None)
    + tuple(Phase(s.info.pool, s.info.alongside) for s in JOINED_SIDES)
)
"""Every place a turn can wait for a pool: each pool phase, each nested pool, then each
joined side holding (the delay its wait adds beyond the stages it runs alongside)."""


def wait_column(phase: Phase, nested: bool = False) -> int:
    """The column of the wait matrix recording waits for ``phase`` (or its nested pool)."""
    key = Phase(phase.inner, phase.inner_stages) if nested else phase
    return WAIT_PHASES.index(key)


def side_wait_column(side: Side) -> int:
    """The column of the wait matrix recording the delay a joined side holding adds."""
    return WAIT_PHASES.index(Phase(side.info.pool, side.info.alongside))


FIRST_TOKEN_WAITS: np.ndarray = np.array([p.before_first_token for p in WAIT_PHASES])
"""Which wait columns delay the first token."""

WAIT_POOLS: tuple[Pool, ...] = tuple(p.pool for p in WAIT_PHASES if p.pool is not None)
"""The pool each wait column waits for."""


def holds_inner(pool: Pool, work: Work) -> np.ndarray:
    """Turns on which a nested pool is actually used (a store read, not an in-memory load)."""
    if pool is Pool.STATE_STORE:
        return work.store_loads > 0
    raise ValueError(f"no rule for nested pool {pool}")


class Segments:
    """Per-turn seconds of one variant (cold or warm): every phase for a fleet, as compact
    arrays; the whole request and the tool for one agent, as lists.

    ``array.array`` of doubles: indexing is nearly as fast as a list and takes a
    quarter of the memory, which bounds a large fleet's footprint.  One agent has
    one block in flight and needs only two numbers per turn, and four more with KV
    residency (``resident``): when its prefill starts and how long, its parallel
    classifiers, and what follows its decode.
    """

    def __init__(self, costs: TurnCosts, work: Work, contended: bool, resident: bool) -> None:
        s = costs.stage_s
        self.tool_s = _as_array(s[Stage.TOOL]) if contended else _as_list(s[Stage.TOOL])
        held = dict(s)
        for side in JOINED_SIDES:
            # The overrun is waited out when the turn joins the side holding, not held here.
            info = side.info
            overrun = np.maximum(0.0, costs.side_s(side) - total(s[st] for st in info.alongside))
            held[info.stage] = np.maximum(0.0, s[info.stage] - overrun)
        if not contended:
            self.request_s = _as_list(costs.request_s)
            if resident:
                before = STAGES[: STAGES.index(Stage.PREFILL)]
                self.before_prefill_s = _as_list(total(held[stage] for stage in before))
                self.prefill_s = _as_list(s[Stage.PREFILL])
                self.parallel_s = _as_list(costs.side_s(Side.PARALLEL_SAFETY))
                self.after_decode_s = _as_list(s[Stage.POST] + s[Stage.DOWNLOAD])
            return
        self.phase_s = [
            _as_array(total(held[stage] for stage in p.stages if stage not in BATCHED))
            for p in PHASES
        ]
        self.nested: list[tuple[array[float], array[float], array[float], list[bool]] | None] = []
        for phase in PHASES:
            if phase.inner is None:
                self.nested.append(None)
                continue
            first = phase.stages.index(phase.inner_stages[0])
            last = phase.stages.index(phase.inner_stages[-1]) + 1
            self.nested.append(
                (
                    _as_array(total(s[stage] for stage in phase.stages[:first])),
                    _as_array(total(s[stage] for stage in phase.stages[first:last])),
                    _as_array(total(s[stage] for stage in phase.stages[last:])),
                    holds_inner(phase.inner, work).tolist(),
                )
            )
        self.decode_s = _as_array(s[Stage.DECODE])
        self.upload_s = _as_array(s[Stage.UPLOAD])
        """What sending the request again costs after a 429."""
        self.side_s = {side: _as_array(costs.side_s(side)) for side in SIDES}


def _as_array(seconds: np.ndarray) -> array[float]:
    return array("d", np.ascontiguousarray(seconds, dtype=float).tobytes())


def _as_list(seconds: np.ndarray) -> list[float]:
    return np.asarray(seconds, dtype=float).tolist()
