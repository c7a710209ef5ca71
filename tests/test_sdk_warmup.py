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

from models.loading import load_scenario
from sim.testbed.clock import TimerLead
from sim.testbed.driver import Agent
from sim.testbed.sdk_warmup import one_response_events, warm_parsers
from sim.turn.transports import Transport


@pytest.mark.parametrize("union", [ResponseStreamEvent, ResponsesServerEvent])
def test_each_event_parses_into_the_model_of_its_type(union: object) -> None:
    for event in one_response_events():
        parsed = construct_type(type_=union, value=event)
        assert parsed.type == event["type"]
        assert not parsed.model_extra


@pytest.mark.parametrize("union", [ResponseStreamEvent, ResponsesServerEvent])
def test_the_finished_response_carries_every_item_a_loop_reads(union: object) -> None:
    *_, completed = one_response_events()
    parsed = construct_type(type_=union, value=completed)
    assert isinstance(parsed, ResponseCompletedEvent)
    kinds = [type(item) for item in parsed.response.output]
    assert kinds == [ResponseReasoningItem, ResponseFunctionToolCall, ResponseOutputMessage]
    assert parsed.response.usage.input_tokens_details.cached_tokens == 5


def test_an_agent_warms_the_parsers_before_its_first_rollout() -> None:
    warm_parsers.cache_clear()
    Agent(load_scenario("codex-spark"), Transport.WS, "http://127.0.0.1:9", "key", TimerLead())
    assert warm_parsers.cache_info().misses == 1
    assert warm_parsers() == 2 * len(one_response_events())
