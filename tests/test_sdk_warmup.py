"""The events the driver warms the SDK's parsers with are the ones its loops read, and the
SDK parses each into the model of its type under both transports' unions."""

from __future__ import annotations

import pytest
from openai._models import construct_type
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseReasoningItem,
    ResponseStreamEvent,
)
from openai.types.responses.responses_server_event import ResponsesServerEvent

from sim.testbed.sdk_warmup import one_response_events, warm_parsers


@pytest.mark.parametrize("union", [ResponseStreamEvent, ResponsesServerEvent])
def test_each_event_parses_into_the_model_of_its_type(union: object) -> None:
    for event in one_response_events():
        parsed = construct_type(type_=union, value=event)
        assert parsed.type == event["type"]
        assert type(parsed).__name__ != "dict"
        assert not parsed.model_extra


@pytest.mark.parametrize("union", [ResponseStreamEvent, ResponsesServerEvent])
def test_the_finished_response_carries_every_item_a_loop_reads(union: object) -> None:
    *_, completed = one_response_events()
    parsed = construct_type(type_=union, value=completed)
    assert isinstance(parsed, ResponseCompletedEvent)
    kinds = [type(item) for item in parsed.response.output]
    assert kinds == [ResponseReasoningItem, ResponseFunctionToolCall, ResponseOutputMessage]
    assert parsed.response.usage.input_tokens_details.cached_tokens == 5


def test_the_parsers_are_warmed_once_per_process() -> None:
    events = len(one_response_events())
    assert warm_parsers() == 2 * events
    assert warm_parsers.cache_info().currsize == 1
