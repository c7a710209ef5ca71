"""The SDK's event parsers, built before a loop is timed.

The openai SDK builds a union's discriminator table and its models' validators the first
time it parses an event of that union: 50-60 ms for the stream events of HTTP
(``ResponseStreamEvent``) and again for WebSocket mode's (``ResponsesServerEvent``),
measured on this project's machine.  A driver that pays this inside its first response
reads that response's end tens of milliseconds after it arrived, which shows up as a
longer first tool gap at the recording proxy and a slower first turn in the testbed.
``warm_parsers`` parses one response's worth of events through both unions, with the
SDK's own parser (the function its streams call), once per process.
"""

from __future__ import annotations

import functools

from openai._models import construct_type
from openai.types.responses import ResponseStreamEvent
from openai.types.responses.responses_server_event import ResponsesServerEvent

from sim.testbed.protocol import (
    Event,
    ResponseHead,
    function_call_item,
    message_item,
    reasoning_item,
    text_part,
    usage,
)


def one_response_events() -> list[Event]:
    """The events of a response with a reasoning item, a function call and a message."""
    head = ResponseHead("resp_warm", "warm", None, [], {}, None, True, 0)
    output = [
        reasoning_item(),
        function_call_item("tool", '{"input": ""}', "completed"),
        message_item("text", "completed"),
    ]
    call, message = output[1], output[2]
    events: list[Event] = [
        {"type": "response.created", "response": head.response("in_progress", [])},
        {"type": "response.in_progress", "response": head.response("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0, "item": output[0]},
        {"type": "response.output_item.done", "output_index": 0, "item": output[0]},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": call["id"],
            "output_index": 1,
            "delta": "{}",
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": call["id"],
            "output_index": 1,
            "arguments": "{}",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": call},
        {"type": "response.output_item.added", "output_index": 2, "item": message},
        {
            "type": "response.content_part.added",
            "item_id": message["id"],
            "output_index": 2,
            "content_index": 0,
            "part": text_part(""),
        },
        {
            "type": "response.output_text.delta",
            "item_id": message["id"],
            "output_index": 2,
            "content_index": 0,
            "delta": "text",
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 2, "item": message},
        {
            "type": "response.completed",
            "response": head.response("completed", output, usage(10.0, 5.0, 2.0)),
        },
    ]
    for sequence, event in enumerate(events):
        event["sequence_number"] = sequence
    return events


@functools.cache
def warm_parsers() -> int:
    """Parse one response's events as the HTTP and WebSocket streams do; how many parsed."""
    parsed = 0
    for event in one_response_events():
        for union in (ResponseStreamEvent, ResponsesServerEvent):
            construct_type(type_=union, value=event)
            parsed += 1
    return parsed
