"""The stages of one turn, in order: the single vocabulary for tables, JSON and plots."""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    """A stage of a turn on the critical path, in the order it happens."""

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
    def label(self) -> str:
        return _LABELS[self]

    @property
    def colour(self) -> str:
        return _COLOURS[self]

    @property
    def group(self) -> str:
        """Where the time goes: client, network, api, safety, inference or tool."""
        return _GROUPS[self]


STAGES: tuple[Stage, ...] = tuple(Stage)
"""All stages in turn order."""

FIRST_TOKEN_STAGES: tuple[Stage, ...] = STAGES[: STAGES.index(Stage.PREFILL) + 1]
"""Stages before the first output token leaves the server (TTFT adds half an RTT)."""

_LABELS = {
    Stage.CLIENT_BUILD: "client: build request",
    Stage.CONNECT: "network: connect (TCP/TLS/WS)",
    Stage.RECOVER: "failed continuation (resend)",
    Stage.UPLOAD: "network: upload",
    Stage.VALIDATE: "api: validate",
    Stage.STATE_LOAD: "api: load state",
    Stage.RENDER: "api: render/tokenize",
    Stage.ROUTE: "api: route",
    Stage.HOPS: "api: intermediate hops",
    Stage.SAFETY: "safety classifiers",
    Stage.QUEUE: "inference: queue",
    Stage.PREFILL: "inference: prefill",
    Stage.DECODE: "inference: decode",
    Stage.POST: "api: post-inference",
    Stage.DOWNLOAD: "network: download",
    Stage.TOOL: "client: tool",
}

_GROUPS = {
    Stage.CLIENT_BUILD: "client",
    Stage.CONNECT: "network",
    Stage.RECOVER: "network",
    Stage.UPLOAD: "network",
    Stage.VALIDATE: "api",
    Stage.STATE_LOAD: "api",
    Stage.RENDER: "api",
    Stage.ROUTE: "api",
    Stage.HOPS: "api",
    Stage.SAFETY: "safety",
    Stage.QUEUE: "inference",
    Stage.PREFILL: "inference",
    Stage.DECODE: "inference",
    Stage.POST: "api",
    Stage.DOWNLOAD: "network",
    Stage.TOOL: "tool",
}

# Colour-blind-safe palette (Okabe-Ito and Tableau hues), one per stage.
_COLOURS = {
    Stage.CLIENT_BUILD: "#8c8c8c",
    Stage.CONNECT: "#4e79a7",
    Stage.RECOVER: "#d62728",
    Stage.UPLOAD: "#76b7b2",
    Stage.VALIDATE: "#f28e2b",
    Stage.STATE_LOAD: "#e15759",
    Stage.RENDER: "#ff9da7",
    Stage.ROUTE: "#edc948",
    Stage.HOPS: "#b07aa1",
    Stage.SAFETY: "#9c755f",
    Stage.QUEUE: "#bab0ac",
    Stage.PREFILL: "#59a14f",
    Stage.DECODE: "#2ca02c",
    Stage.POST: "#d37295",
    Stage.DOWNLOAD: "#86bcb6",
    Stage.TOOL: "#499894",
}
