"""What the driver measured: one row per turn, grouped by rollout.

Times are ``time.monotonic()`` seconds (the clock the emulator's log uses too):
``_at_s`` is a point in time, ``_s`` a duration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class TurnRecord:
    """One turn as the client saw it."""

    rollout: int
    turn: int
    started_at_s: float
    items_sent: int = 0
    sent_at_s: float = math.nan
    """When the request left the SDK (the client has built it)."""
    first_output_at_s: float = math.nan
    """The first output event (``response.output_item.added``): time to first token."""
    completed_at_s: float = math.nan
    """``response.completed`` read: the end of the request."""
    response_id: str | None = None
    new_connections: int = 0
    recoveries: int = 0
    """``previous_response_not_found`` answers after which the client resent everything."""
    recover_s: float = 0.0
    """Seconds spent on those failed attempts."""
    retries: int = 0
    """Requests sent again: by the SDK (HTTP) or after a closed socket (WebSocket)."""
    errors: list[str] = field(default_factory=list)
    tool_s: float = 0.0
    """Wall seconds of the tool step (every call of the response, run as the client runs them)."""
    drawn_tool_s: float = 0.0
    """What the tool step was drawn to take: the slowest call when they run in parallel,
    their sum when one after another."""
    calls: int = 0
    """Tool calls the response asked for (0: the rollout's final answer)."""
    items_new: int = 0
    """Items of this turn's new input (the task, or the previous turn's tool outputs)."""
    context_items: int = 0
    """Items of the conversation the request continues, its new input included."""
    new_tokens: float = 0.0
    prior_tokens: float = 0.0
    """Tokens of the conversation before the new input (inputs and the outputs' usage)."""
    output_tokens: float = math.nan
    """The response's output tokens (its usage; its text where it reports none)."""

    @property
    def ttft_s(self) -> float:
        return self.first_output_at_s - self.started_at_s

    @property
    def request_s(self) -> float:
        return self.completed_at_s - self.started_at_s


@dataclass
class RolloutRecord:
    """One rollout: its turns, back to back."""

    rollout: int
    turns: list[TurnRecord]
    turn_limited: bool = False
    """The server still asked for tools when the turn limit stopped the rollout."""

    @property
    def e2e_s(self) -> float:
        return self.turns[-1].completed_at_s - self.turns[0].started_at_s

    @property
    def new_connections(self) -> int:
        return sum(t.new_connections for t in self.turns)

    @property
    def recoveries(self) -> int:
        return sum(t.recoveries for t in self.turns)


def turn_ttfts_s(rollouts: list[RolloutRecord]) -> np.ndarray:
    return np.array([t.ttft_s for r in rollouts for t in r.turns])


def e2es_s(rollouts: list[RolloutRecord]) -> np.ndarray:
    return np.array([r.e2e_s for r in rollouts])


def observed_shape(rollouts: list[RolloutRecord]) -> dict[str, float]:
    """What the server made of the rollouts: requests and tool calls per rollout, and how
    many rollouts the turn limit stopped."""
    count = len(rollouts)
    return {
        "requests_per_rollout": sum(len(r.turns) for r in rollouts) / count,
        "calls_per_rollout": sum(t.calls for r in rollouts for t in r.turns) / count,
        "turn_limited": float(sum(r.turn_limited for r in rollouts)),
    }
