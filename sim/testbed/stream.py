"""One response's events, in the order the Responses API streams them.

``response.created`` and ``response.in_progress`` when the request is taken;
when prefill ends, a reasoning item and then the turn's output item: a function
call whose arguments stream as ``response.function_call_arguments.delta``, or on
the last turn a message whose text streams as ``response.output_text.delta``;
their ``.done`` events and ``response.output_item.done``; then
``response.completed`` with the whole output and the usage.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sim.testbed.intake import Prepared
from sim.testbed.protocol import (
    Event,
    Item,
    function_call_item,
    message_item,
    padded,
    reasoning_item,
    text_part,
    usage,
)
from sim.testbed.state import ResponseState

_ARGUMENT_KEY = "input"


DELTA_INTERVAL_S = 0.002
"""Shortest wall time between two output deltas while decoding."""
MAX_DELTAS = 8
"""Output deltas of one response at most: the output streams in that many even chunks
(a delta a token would cost the client more parsing than the model charges anyone)."""


class OutputStream:
    """Builds and sends the events of one response; knows its output items and state."""

    def __init__(
        self,
        p: Prepared,
        bytes_per_token: float,
        emit: Callable[[Event], Awaitable[None]],
        prefix_reuse: float = 1.0,
    ) -> None:
        """``prefix_reuse``: the share of the fixed part and the history read from the prefix
        cache (the usage's ``cached_tokens``, as the prefill was charged)."""
        self._p, self._emit, self._sequence = p, emit, 0
        self._prefix_reuse = prefix_reuse
        chars = round(p.plan.output_tokens * bytes_per_token) if p.generate else 0
        self._answers = p.plan.is_last
        self._text = padded(chars) if self._answers else padded(chars, wrap=_ARGUMENT_KEY)
        self._sent_chars = 0
        self._reasoning = reasoning_item()
        self._item = (
            message_item("", "in_progress")
            if self._answers
            else function_call_item(p.plan.tool_name, "", "in_progress")
        )
        self._bytes_per_token = bytes_per_token

    async def _send(self, event: Event) -> None:
        event["sequence_number"] = self._sequence
        self._sequence += 1
        await self._emit(event)

    def _response(self, status: str, output: list[Item], with_usage: bool = False) -> Any:
        p = self._p.processed
        tokens = None
        if with_usage:
            prompt = p.fixed_tokens + p.prior_tokens + p.new_tokens
            cached = self._prefix_reuse * (p.fixed_tokens + p.prior_tokens)
            tokens = usage(prompt, cached, p.output_tokens)
        return self._p.head.response(status, output, tokens)

    async def begin(self) -> None:
        await self._send(
            {"type": "response.created", "response": self._response("in_progress", [])}
        )
        await self._send(
            {"type": "response.in_progress", "response": self._response("in_progress", [])}
        )

    async def start_output(self) -> None:
        """The first output event (time to first token is taken here)."""
        await self._send(
            {"type": "response.output_item.added", "output_index": 0, "item": self._reasoning}
        )
        await self._send(
            {"type": "response.output_item.done", "output_index": 0, "item": self._reasoning}
        )
        await self._send(
            {"type": "response.output_item.added", "output_index": 1, "item": dict(self._item)}
        )
        if self._answers:
            await self._send(
                {
                    "type": "response.content_part.added",
                    "item_id": self._item["id"],
                    "output_index": 1,
                    "content_index": 0,
                    "part": text_part(""),
                }
            )

    async def advance(self, fraction: float) -> None:
        """Send the output generated up to ``fraction`` of the decode time."""
        upto = round(len(self._text) * fraction)
        delta = self._text[self._sent_chars : upto]
        self._sent_chars = max(self._sent_chars, upto)
        if not delta:
            return
        event: Event = {"item_id": self._item["id"], "output_index": 1, "delta": delta}
        if self._answers:
            event.update(type="response.output_text.delta", content_index=0, logprobs=[])
        else:
            event["type"] = "response.function_call_arguments.delta"
        await self._send(event)

    def _final_item(self) -> Item:
        if self._answers:
            return {**self._item, "status": "completed", "content": [text_part(self._text)]}
        return {**self._item, "status": "completed", "arguments": self._text}

    async def finish_output(self) -> None:
        item_id = self._item["id"]
        if self._answers:
            head = {"item_id": item_id, "output_index": 1, "content_index": 0}
            await self._send(
                {"type": "response.output_text.done", **head, "text": self._text, "logprobs": []}
            )
            await self._send(
                {"type": "response.content_part.done", **head, "part": text_part(self._text)}
            )
        else:
            await self._send(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item_id,
                    "output_index": 1,
                    "name": self._item["name"],
                    "arguments": self._text,
                }
            )
        await self._send(
            {"type": "response.output_item.done", "output_index": 1, "item": self._final_item()}
        )

    def output(self) -> list[Item]:
        return [self._reasoning, self._final_item()] if self._p.generate else []

    def state(self) -> ResponseState:
        """The conversation after this response, as the store and the cache keep it."""
        output = self.output()
        output_tokens = self._p.processed.output_tokens
        return ResponseState(
            response_id=self._p.head.response_id,
            context=(*self._p.context, *output),
            context_tokens=self._p.context_tokens + output_tokens,
            fixed_key=self._p.fixed_key,
            rollout=self._p.rollout,
            replication=self._p.replication,
            store=self._p.head.store,
        )

    async def complete(self) -> None:
        response = self._response("completed", self.output(), with_usage=True)
        await self._send({"type": "response.completed", "response": response})
