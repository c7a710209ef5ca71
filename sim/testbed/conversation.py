"""The client's conversation: what it keeps, what it sends next, and what each turn carried.

A real client keeps every output item (reasoning, messages, tool calls) in its
history beside the task and the tool outputs; it sends either the whole history
(no stored state) or only the new input after ``previous_response_id``.  Tokens
are counted as the emulator counts them (text of ``bytes_per_token`` characters
a token), except the outputs, which count as the response's usage says (hidden
reasoning included), as the model's history grows.
"""

from __future__ import annotations

from typing import Any

from sim.testbed.protocol import text_of, tokens_in
from sim.testbed.records import TurnRecord

CALL_TYPES = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}
"""Output items that ask the client for a tool, and the type of the item that answers each."""


def as_dict(item: Any) -> dict[str, Any]:
    """An item as a plain dict (the SDK's models, or what the client built itself)."""
    return item if isinstance(item, dict) else item.to_dict()


def tool_calls(output: list[Any]) -> list[Any]:
    """The items of a response's output that ask for a tool."""
    return [item for item in output if getattr(item, "type", None) in CALL_TYPES]


def answer(call: Any, output: str) -> dict[str, Any]:
    """The input item that carries a tool's output back for ``call``."""
    return {"type": CALL_TYPES[call.type], "call_id": call.call_id, "output": output}


class Conversation:
    """One rollout's history and the input of its next request."""

    def __init__(self, task: str, bytes_per_token: float) -> None:
        self.bytes_per_token = bytes_per_token
        first = {"role": "user", "content": task}
        self.history: list[Any] = [first]
        self.new_input: list[Any] = [first]
        self.previous_id: str | None = None
        self._prior_tokens = 0.0
        self._new_tokens = self._tokens([first])

    def _tokens(self, items: list[Any]) -> float:
        return sum(tokens_in(text_of(as_dict(i)), self.bytes_per_token) for i in items)

    def sent(self, record: TurnRecord, resend: bool) -> list[Any]:
        """The input of the next request (noted on ``record``): everything, or the new input."""
        record.items_new = len(self.new_input)
        record.context_items = len(self.history)
        record.new_tokens, record.prior_tokens = self._new_tokens, self._prior_tokens
        sent = self.history if resend or self.previous_id is None else self.new_input
        record.items_sent = len(sent)
        return sent

    def restart(self) -> None:
        """The server lost the chain: the next request resends the whole history."""
        self.previous_id = None

    def answered(self, response: Any, record: TurnRecord) -> None:
        """Note the response's output tokens on ``record`` (its usage, else its text)."""
        usage = getattr(response, "usage", None)
        output_tokens = getattr(usage, "output_tokens", None)
        if output_tokens is None:
            output_tokens = self._tokens(list(response.output))
        record.output_tokens = float(output_tokens)

    def continue_after(self, response: Any, record: TurnRecord, answers: list[Any]) -> None:
        """Keep the response's output and the tools' answers; they are the next new input."""
        self._prior_tokens += self._new_tokens + record.output_tokens
        self._new_tokens = self._tokens(answers)
        self.history.extend([*response.output, *answers])
        self.new_input = list(answers)
        self.previous_id = response.id
