"""The stage table: every stage of a turn, in order, and everything the layers need to know of it.

Each stage declares in one place the pool it holds in a fleet, whether it is
before the first output token, its group, its label and its colour.  The side
table declares the work a turn does off its critical path that still holds a
pool (the parallel classifiers, overlapped post-inference work).  The engines,
the fleet models, the reports, the trace and the dashboard read these tables;
nothing else says which work holds which pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Pool(StrEnum):
    """A contended resource shared by the agents of a fleet."""

    API = "api"
    STATE_STORE = "state_store"
    SAFETY = "safety"
    INFERENCE = "inference"

    @property
    def label(self) -> str:
        return _POOL_LABELS[self]

    @property
    def held_within(self) -> Pool | None:
        """The pool whose server waits while this one serves (a state-store read is made by
        an API worker, which stays busy until the read returns)."""
        return Pool.API if self is Pool.STATE_STORE else None


POOLS: tuple[Pool, ...] = tuple(Pool)
"""Every pool, in the order a turn first meets it."""

_POOL_LABELS = {
    Pool.API: "API workers",
    Pool.STATE_STORE: "state store",
    Pool.SAFETY: "safety classifiers",
    Pool.INFERENCE: "inference slots",
}


class Group(StrEnum):
    """Where the time goes."""

    CLIENT = "client"
    NETWORK = "network"
    API = "api"
    SAFETY = "safety"
    INFERENCE = "inference"
    TOOL = "tool"


@dataclass(frozen=True)
class StageInfo:
    """What the layers need to know of one stage."""

    label: str
    group: Group
    colour: str
    pool: Pool | None
    """The pool it holds in a fleet (None: it uses no contended resource)."""
    before_first_token: bool
    """It happens before the first output token leaves the server (TTFT)."""


class Stage(StrEnum):
    """A stage of a turn on the critical path, in the order it happens."""

    COMPACT = "compact"
    RETRY = "retry"
    CLIENT_BUILD = "client_build"
    CONNECT = "connect"
    RECOVER = "recover"
    UPLOAD = "upload"
    VALIDATE = "validate"
    STATE_LOAD = "state_load"
    RENDER = "render"
    ROUTE = "route"
    HOPS = "hops"
    SAFETY = "safety"
    QUEUE = "queue"
    PREFILL = "prefill"
    DECODE = "decode"
    POST = "post"
    DOWNLOAD = "download"
    TOOL = "tool"

    @property
    def info(self) -> StageInfo:
        return STAGE_TABLE[self]

    @property
    def label(self) -> str:
        return STAGE_TABLE[self].label

    @property
    def phrase(self) -> str:
        """The stage as words in a sentence (a label such as "client: tool" is a legend's
        entry, not a noun): singular, lower case."""
        return _PHRASES[self]

    @property
    def colour(self) -> str:
        return STAGE_TABLE[self].colour

    @property
    def group(self) -> Group:
        return STAGE_TABLE[self].group

    @property
    def pool(self) -> Pool | None:
        return STAGE_TABLE[self].pool


def _row(label: str, group: Group, colour: str, pool: Pool | None, first: bool) -> StageInfo:
    return StageInfo(label, group, colour, pool, first)


_C, _N, _A, _S, _I, _T = (
    Group.CLIENT,
    Group.NETWORK,
    Group.API,
    Group.SAFETY,
    Group.INFERENCE,
    Group.TOOL,
)

# Colour-blind-safe palette (Okabe-Ito and Tableau hues), one per stage.  The queue
# stage is the time a turn waits for pools (filled in by the fleet); it holds none.
# Failed attempts before the one that succeeds hold no pool either: a fleet does not
# queue them (docs/model/omissions.md); nor is a compaction request, sent before the
# turn's own request and counted whole in its stage.
STAGE_TABLE: dict[Stage, StageInfo] = {
    Stage.COMPACT: _row("compaction request (history summarised)", _I, "#17becf", None, True),
    Stage.RETRY: _row("failed attempts and backoff (retries)", _N, "#ff7f0e", None, True),
    Stage.CLIENT_BUILD: _row("client: build request", _C, "#8c8c8c", None, True),
    Stage.CONNECT: _row("network: connect (TCP/TLS/WS)", _N, "#4e79a7", None, True),
    Stage.RECOVER: _row("failed continuation (resend)", _N, "#d62728", None, True),
    Stage.UPLOAD: _row("network: upload", _N, "#76b7b2", None, True),
    Stage.VALIDATE: _row("api: validate", _A, "#f28e2b", Pool.API, True),
    Stage.STATE_LOAD: _row("api: load state", _A, "#e15759", Pool.STATE_STORE, True),
    Stage.RENDER: _row("api: render/tokenize", _A, "#ff9da7", Pool.API, True),
    Stage.ROUTE: _row("api: route", _A, "#edc948", Pool.API, True),
    Stage.HOPS: _row("api: intermediate hops", _A, "#b07aa1", None, True),
    Stage.SAFETY: _row("safety classifiers", _S, "#9c755f", Pool.SAFETY, True),
    Stage.QUEUE: _row("queue: waiting for pools", _I, "#bab0ac", None, True),
    Stage.PREFILL: _row("inference: prefill", _I, "#59a14f", Pool.INFERENCE, True),
    Stage.DECODE: _row("inference: decode", _I, "#2ca02c", Pool.INFERENCE, False),
    Stage.POST: _row("api: post-inference", _A, "#d37295", Pool.API, False),
    Stage.DOWNLOAD: _row("network: download", _N, "#1f3a93", None, False),
    Stage.TOOL: _row("client: tool", _T, "#499894", None, False),
}

_PHRASES: dict[Stage, str] = {
    Stage.COMPACT: "compaction",
    Stage.RETRY: "retrying (failed attempts and backoff)",
    Stage.CLIENT_BUILD: "request building on the client",
    Stage.CONNECT: "connection setup",
    Stage.RECOVER: "recovery from failed continuations",
    Stage.UPLOAD: "upload",
    Stage.VALIDATE: "validation",
    Stage.STATE_LOAD: "state loading",
    Stage.RENDER: "rendering (tokenization)",
    Stage.ROUTE: "routing",
    Stage.HOPS: "the intermediate hops",
    Stage.SAFETY: "safety classification",
    Stage.QUEUE: "queueing for pools",
    Stage.PREFILL: "prefill",
    Stage.DECODE: "decoding",
    Stage.POST: "post-inference work",
    Stage.DOWNLOAD: "download",
    Stage.TOOL: "tool execution on the client",
}

STAGES: tuple[Stage, ...] = tuple(Stage)
"""All stages in turn order."""

FIRST_TOKEN_STAGES: tuple[Stage, ...] = tuple(s for s in STAGES if s.info.before_first_token)
"""Stages before the first output token leaves the server (TTFT adds half an RTT)."""

STAGE_COLUMN: dict[Stage, int] = {stage: index for index, stage in enumerate(STAGES)}
"""Column of each stage in a stage matrix (records, expectations)."""


class Side(StrEnum):
    """Work a turn starts off its critical path that still holds a pool's server."""

    PARALLEL_SAFETY = "parallel_safety"
    OVERLAPPED_POST = "overlapped_post"

    @property
    def info(self) -> SideInfo:
        return SIDE_TABLE[self]


@dataclass(frozen=True)
class SideInfo:
    """Where a side holding runs and what the turn waits for."""

    label: str
    pool: Pool
    stage: Stage
    """The stage whose work it is; for a joined holding, that stage's cost carries its
    overrun beyond the stages it runs alongside (``max(0, parallel - prefill)`` is part
    of the ``safety`` stage)."""
    starts_with: Stage
    """It asks for its server when this stage starts."""
    joined_before: Stage | None
    """The turn waits for it to finish before this stage (None: never waits)."""

    @property
    def alongside(self) -> tuple[Stage, ...]:
        """The stages it runs alongside: from ``starts_with`` up to ``joined_before``."""
        if self.joined_before is None:
            return ()
        return STAGES[STAGE_COLUMN[self.starts_with] : STAGE_COLUMN[self.joined_before]]


SIDE_TABLE: dict[Side, SideInfo] = {
    Side.PARALLEL_SAFETY: SideInfo(
        "parallel safety classifiers", Pool.SAFETY, Stage.SAFETY, Stage.PREFILL, Stage.DECODE
    ),
    Side.OVERLAPPED_POST: SideInfo(
        "post-inference work overlapped with the next request",
        Pool.API,
        Stage.POST,
        Stage.DOWNLOAD,
        None,
    ),
}
"""The parallel classifiers hold a safety worker alongside prefill, and the first token
waits for their verdict; over WebSocket, post-inference work holds an API worker after
the response while the client moves on."""

SIDES: tuple[Side, ...] = tuple(Side)
