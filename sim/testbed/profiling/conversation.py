"""Conversations shaped like a scenario's, for the profiler: the testbed's own text.

The instructions, tool definitions and task are the driver's (``Prompt``); each
turn adds what the testbed's conversations hold (a reasoning item, a function
call whose arguments are the scripted output, the tool's output) at the
scenario's mean sizes, so the model's tokens per scenario token are those of a
live run.  Sizes are counted as the emulator counts them (``bytes_per_token``
characters a token).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.scenario import Scenario
from sim.testbed.agent import Prompt, tool_output_text
from sim.testbed.protocol import (
    Item,
    function_call_item,
    padded,
    reasoning_item,
    text_of,
    tokens_in,
    tools_text,
)

_ARGUMENT_KEY = "input"


@dataclass(frozen=True)
class Conversation:
    instructions: str
    tools: list[dict[str, Any]]
    items: tuple[Item, ...]
    bytes_per_token: float

    @property
    def fixed_tokens(self) -> float:
        return tokens_in(self.instructions + tools_text(self.tools), self.bytes_per_token)

    def tokens(self, items: tuple[Item, ...] | None = None) -> float:
        """Scenario tokens of ``items`` (default: the whole conversation, fixed part included)."""
        if items is None:
            return self.fixed_tokens + self.tokens(self.items)
        return sum(tokens_in(text_of(item), self.bytes_per_token) for item in items)

    def head(self, turns: int) -> Conversation:
        """The task and the first ``turns`` tool round trips."""
        return Conversation(
            self.instructions, self.tools, self.items[: 1 + 3 * turns], self.bytes_per_token
        )


def conversation(scenario: Scenario, turns: int) -> Conversation:
    """``turns`` tool round trips of ``scenario``'s mean sizes after its task."""
    w, per_token = scenario.workload, scenario.network.bytes_per_token
    prompt = Prompt.of(scenario)
    output_chars = round(w.output_tokens.mean * per_token)
    tool_tokens = sum(
        p * tool.output_tokens.mean for p, tool in zip(w.tool_probabilities(), w.tools, strict=True)
    )
    items: list[Item] = [{"type": "message", "role": "user", "content": prompt.task}]
    for turn in range(turns):
        name = w.tools[turn % len(w.tools)].name
        call = function_call_item(name, padded(output_chars, wrap=_ARGUMENT_KEY), "completed")
        answer = {
            "type": "function_call_output",
            "call_id": call["call_id"],
            "output": tool_output_text(tool_tokens, per_token),
        }
        items += [reasoning_item(), call, answer]
    return Conversation(prompt.instructions, prompt.tools, tuple(items), per_token)


def tool_answer(tokens: float, bytes_per_token: float) -> Item:
    """A tool's output of ``tokens`` scenario tokens (the new input of a continuation)."""
    return {
        "type": "function_call_output",
        "call_id": "call_profile",
        "output": tool_output_text(tokens, bytes_per_token),
    }
