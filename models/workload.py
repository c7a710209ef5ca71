"""What one rollout asks of the system: its tool calls, its tokens and the tool mix."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from pydantic import field_validator

from models.distributions import Distribution
from models.fields import Section, param
from models.strict import Float, Int

Calls = TypeVar("Calls", int, float, np.ndarray)


def rollout_turns(tool_calls: Calls) -> Calls:
    """A rollout with n tool calls has n + 1 turns: each call's result is sent back in a
    turn of its own, and the last turn gives the final answer."""
    return tool_calls + 1


class ToolKind(Section):
    """One kind of tool the agent calls, with its own time and output size."""

    name: str = param("tool name, e.g. read_file", "workload description", min_length=1)
    weight: Float = param("relative frequency of this tool among calls", "assumption", gt=0, le=1e9)
    time_s: Distribution = param("client-side time to run the tool", "assumption")
    output_tokens: Distribution = param("tokens of the tool output sent back", "assumption")


class Workload(Section):
    """What one rollout (one user task) asks of the system."""

    tool_calls_per_rollout: Distribution = param(
        "tool-calling turns in a rollout (one call each unless parallel_calls_per_turn says "
        "more); the rollout has one more request (the final answer)",
        "FACTS: rollouts with 20 or more tool calls",
    )
    instructions_tokens: Float = param(
        "system prompt / instructions tokens", "assumption", ge=0, le=1e6
    )
    tool_definitions_tokens: Float = param(
        "tokens of the tool definitions sent with the request", "assumption", ge=0, le=1e6
    )
    first_message_tokens: Float = param("tokens of the user's task", "assumption", ge=0, le=1e6)
    output_tokens: Distribution = param(
        "tokens the model emits per turn (reasoning plus the call)", "assumption"
    )
    output_items_per_turn: Int = param(
        "input items a turn's output adds to the history (reasoning item + function call)",
        "Responses API item model",
        ge=1,
        le=100,
    )
    tools: tuple[ToolKind, ...] = param("the tool mix", "assumption", min_length=1)
    parallel_calls_per_turn: Distribution = param(
        "function calls in one response, run concurrently by the client; each adds a call "
        "item and an output item, and the turn's tool time is the slowest call's",
        "Responses API parallel_tool_calls; 1: one call per turn",
    )

    @field_validator("tool_calls_per_rollout")
    @classmethod
    def _integer_calls(cls, value: Any) -> Any:
        if not value.is_integer_valued():
            raise ValueError("must be integer-valued: a constant or an empirical distribution")
        return value

    @field_validator("parallel_calls_per_turn")
    @classmethod
    def _at_least_one_call(cls, value: Any) -> Any:
        if not value.is_integer_valued() or float(value.support()[0].min()) < 1:
            raise ValueError("must be integer-valued and >= 1: a constant or an empirical")
        return value

    @property
    def parallel(self) -> bool:
        """Some turns call more than one tool."""
        return float(self.parallel_calls_per_turn.support()[0].max()) > 1

    def tool_probabilities(self) -> np.ndarray:
        """Probability that a call is of each tool kind (the weights, normalised)."""
        weights = np.array([tool.weight for tool in self.tools])
        return weights / weights.sum()

    def mean_tool_time_s(self) -> float:
        """Expected client time of one tool call over the tool mix."""
        return float(self.tool_probabilities() @ [tool.time_s.mean for tool in self.tools])

    def mean_tool_output_tokens(self) -> float:
        """Expected output tokens of one tool call over the tool mix."""
        return float(self.tool_probabilities() @ [tool.output_tokens.mean for tool in self.tools])

    def mean_history_growth_tokens(self, cap_tokens: float) -> float:
        """Expected tokens a tool-calling turn adds to the history: its output and each of its
        calls' outputs, cut to ``cap_tokens`` (0: not cut)."""
        kept = [
            tool.output_tokens.mean
            - (float(tool.output_tokens.partial_expectation(cap_tokens)) if cap_tokens > 0 else 0.0)
            for tool in self.tools
        ]
        per_call = float(self.tool_probabilities() @ kept)
        return self.output_tokens.mean + self.parallel_calls_per_turn.mean * per_call

    def tool_time_survival(self, x_s: float) -> float:
        """P[a tool call takes longer than ``x_s``] over the tool mix."""
        return float(self.tool_probabilities() @ [tool.time_s.survival(x_s) for tool in self.tools])
