"""The emulator says what the service says about its own time: ``x-request-id`` and
``openai-processing-ms`` on HTTP, a ``responsesapi.websocket_timing`` event after each
WebSocket response whose split adds up to the span it logged, and cached prompt tokens
as its prefill was charged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from support import scenario

from sim.testbed import clock
from sim.testbed.agent import MODEL, Prompt
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time
from sim.testbed.timing import (
    API_OVERHEAD_FIELD,
    ENGINE_TOTAL_FIELD,
    ENGINE_TTFT_FIELD,
    PROCESSING_HEADER,
    REQUEST_ID_HEADER,
    TIMING_EVENT,
)

pytestmark = pytest.mark.live

TIME_SCALE = 0.05
SPARK = scenario("codex-spark")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with emulator_process(scale_time(SPARK, TIME_SCALE), ServerSettings()) as url:
        yield url


def _body(rollout: int) -> dict[str, Any]:
    prompt = Prompt.of(SPARK)
    return {
        "model": MODEL,
        "instructions": prompt.instructions,
        "tools": prompt.tools,
        "metadata": {"loopbudget_rollout": str(rollout)},
        "input": prompt.task,
    }


def _log(base_url: str) -> dict[str, dict[str, Any]]:
    response = httpx2.get(
        f"{base_url}/testbed/log", headers={"authorization": f"Bearer {DEFAULT_API_KEY}"}
    )
    return {r["response_id"]: r for r in response.json()["records"] if "response_id" in r}


def test_http_responses_carry_a_request_id_and_the_servers_processing_time(base_url: str) -> None:
    async def ask() -> tuple[Any, Any]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key=DEFAULT_API_KEY) as client:
            plain = await client.responses.with_raw_response.create(**_body(0))
            streamed = await client.responses.with_raw_response.create(**_body(1), stream=True)
            async for _ in streamed.parse():
                pass
            return plain, streamed

    plain, streamed = clock.run(ask)
    record = _log(base_url)[plain.parse().id]
    span_ms = (record["completed_at_s"] - record["arrived_at_s"]) * 1e3
    assert plain.headers[REQUEST_ID_HEADER].startswith("req_")
    assert plain.headers[REQUEST_ID_HEADER] != streamed.headers[REQUEST_ID_HEADER]
    # A JSON body is sent when the response is done: the header is the whole span.
    assert float(plain.headers[PROCESSING_HEADER]) == pytest.approx(span_ms, abs=2.0)
    # A stream's headers leave when the request is taken, long before its end.
    assert float(streamed.headers[PROCESSING_HEADER]) < span_ms / 2


def test_each_websocket_response_is_followed_by_its_timing_split(base_url: str) -> None:
    async def converse() -> list[Any]:
        events = []
        client = openai.AsyncOpenAI(base_url=base_url, api_key=DEFAULT_API_KEY)
        async with client, client.responses.connect() as connection:
            previous = None
            for _ in range(4):
                body = _body(2)
                if previous is not None:
                    call = previous.output[-1]
                    body["input"] = [
                        {"type": "function_call_output", "call_id": call.call_id, "output": "x"}
                    ]
                    body["previous_response_id"] = previous.id
                await connection.response.create(**body)
                while (event := await connection.recv()).type != "response.completed":
                    pass
                previous = event.response
                events.append((event, await connection.recv()))
        return events

    log = _log_after(base_url, clock.run(converse))
    for turn, (completed, timing, record) in enumerate(log):
        assert timing.type == TIMING_EVENT
        metrics = timing.timing_metrics
        assert timing.response_id == completed.response.id
        span_ms = (record["completed_at_s"] - record["arrived_at_s"]) * 1e3
        engine_ms = (record["stage_s"]["prefill"] + record["stage_s"]["decode"]) * 1e3
        assert metrics[ENGINE_TOTAL_FIELD] == pytest.approx(engine_ms, rel=1e-9)
        assert metrics[ENGINE_TTFT_FIELD] == pytest.approx(record["stage_s"]["prefill"] * 1e3)
        slot_wait_ms = record["wait_s"].get("inference", 0.0) * 1e3
        # What the response's span holds beyond the engine (never below zero: the last
        # timer may end a fraction of a millisecond early).
        beyond_ms = max(0.0, span_ms - engine_ms - slot_wait_ms)
        assert metrics[API_OVERHEAD_FIELD] == pytest.approx(beyond_ms, abs=1e-6)
        if turn == 0:
            continue  # the first request also pays for warming the server's path
        # At least the API's sequential stages before inference, as the emulator charged them
        # (beyond them: the parallel classifiers' overrun and the server's own work).
        stage_ms = {stage: seconds * 1e3 for stage, seconds in record["stage_s"].items()}
        sequential_ms = sum(stage_ms[s] for s in ("validate", "state_load", "render", "route"))
        assert sequential_ms - 0.5 <= metrics[API_OVERHEAD_FIELD]


def _log_after(base_url: str, events: list[Any]) -> list[tuple[Any, Any, dict[str, Any]]]:
    log = _log(base_url)
    return [(done, timing, log[done.response.id]) for done, timing in events]


def test_cached_prompt_tokens_are_the_prefix_the_prefill_was_charged_for(base_url: str) -> None:
    async def two_turns() -> list[Any]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key=DEFAULT_API_KEY) as client:
            first = await client.responses.create(**_body(3))
            answer = {"type": "function_call_output", "call_id": first.output[-1].call_id}
            second = await client.responses.create(
                **{**_body(3), "input": [{**answer, "output": "y" * 400}]},
                previous_response_id=first.id,
            )
            return [first, second]

    responses = clock.run(two_turns)
    log = _log(base_url)
    reuse = SPARK.inference.prefix_cache_hit_fraction
    for response in responses:
        record = log[response.id]
        resident = record["fixed_tokens"] + record["prior_tokens"]
        usage = response.usage
        assert usage.input_tokens_details.cached_tokens == round(reuse * resident)
        assert usage.input_tokens == round(resident + record["new_tokens"])
