"""The emulator speaks the Responses API as the official SDK expects it, over HTTP, SSE and
WebSocket mode, and keeps its contract: stored and cached state, errors with their documented
shape, bad frames answered on a usable connection, no task left behind by a client that
leaves mid-response, and 200 WebSocket connections held at once."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
import websockets
from support import scenario

from sim.testbed import clock
from sim.testbed.agent import MODEL, Prompt
from sim.testbed.app import CALIBRATION_HEADER
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time

pytestmark = pytest.mark.live

TIME_SCALE = 0.02
MAX_FRAME_BYTES = 256 * 1024
KEY = DEFAULT_API_KEY


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    scaled = scale_time(scenario("codex-spark"), TIME_SCALE)
    with emulator_process(scaled, ServerSettings(max_frame_bytes=MAX_FRAME_BYTES)) as url:
        yield url


def _client(base_url: str, key: str = KEY) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0)


def _body(rollout: int, **extra: Any) -> dict[str, Any]:
    prompt = Prompt.of(scenario("codex-spark"))
    return {
        "model": MODEL,
        "instructions": prompt.instructions,
        "tools": prompt.tools,
        "metadata": {"loopbudget_rollout": str(rollout)},
        **extra,
    }


async def _stats(base_url: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as http:
        response = await http.get(
            f"{base_url}/testbed/stats", headers={"authorization": f"Bearer {KEY}"}
        )
        return response.json()


async def _log(base_url: str) -> list[dict[str, Any]]:
    async with httpx2.AsyncClient() as http:
        response = await http.get(
            f"{base_url}/testbed/log", headers={"authorization": f"Bearer {KEY}"}
        )
        return response.json()["records"]


async def _until(ws: Any, *types: str) -> Any:
    while True:
        event = await ws.recv()
        if event.type in types:
            return event


def test_http_json_sse_and_the_sdk_stream_helper(base_url: str) -> None:
    async def main() -> None:
        async with _client(base_url) as client:
            response = await client.responses.create(**_body(0), input="fix the bug")
            assert [item.type for item in response.output] == ["reasoning", "function_call"]
            assert response.usage.input_tokens > 10_000
            stream = await client.responses.create(**_body(1), input="fix it", stream=True)
            kinds = [event.type async for event in stream]
            assert kinds[:5] == [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.output_item.done",
                "response.output_item.added",
            ]
            assert "response.function_call_arguments.delta" in kinds
            assert kinds[-3:] == [
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
            async with client.responses.stream(**_body(2), input="and now") as events:
                final = await events.get_final_response()
            call = final.output[-1]
            assert json.loads(call.arguments)["input"]

    clock.run(main)


def test_previous_response_id_is_loaded_when_stored_and_refused_when_not(base_url: str) -> None:
    async def main() -> None:
        async with _client(base_url) as client:
            first = await client.responses.create(**_body(3), input="task", store=True)
            answer = {"type": "function_call_output", "call_id": first.output[-1].call_id}
            answer["output"] = "x" * 400
            second = await client.responses.create(
                **_body(3), input=[answer], previous_response_id=first.id
            )
            assert second.previous_response_id == first.id
            unstored = await client.responses.create(**_body(4), input="task", store=False)
            with pytest.raises(openai.BadRequestError) as refused:
                await client.responses.create(
                    **_body(4), input=[answer], previous_response_id=unstored.id
                )
            assert refused.value.code == "previous_response_not_found"
            assert refused.value.param == "previous_response_id"
        records = {r.get("response_id"): r for r in await _log(base_url)}
        assert records[second.id]["source"] == "store"
        assert records[second.id]["items_in_context"] == 4

    clock.run(main)


def test_a_wrong_bearer_token_is_refused_on_http_and_websocket(base_url: str) -> None:
    async def main() -> None:
        async with _client(base_url, key="wrong") as client:
            with pytest.raises(openai.AuthenticationError):
                await client.responses.create(**_body(5), input="task")
            with pytest.raises(websockets.InvalidStatus) as denied:
                async with client.responses.connect():
                    pass
            assert denied.value.response.status_code == 401

    clock.run(main)


def test_websocket_cache_warm_up_not_found_and_a_failed_continuation_evicting_its_parent(
    base_url: str,
) -> None:
    async def main() -> dict[str, str]:
        async with _client(base_url) as client, client.responses.connect() as ws:
            await ws.response.create(**_body(6), input="task", store=False, generate=False)
            warm = (await _until(ws, "response.completed")).response
            assert warm.output == []
            await ws.response.create(
                **_body(6), input="go", previous_response_id=warm.id, store=False
            )
            parent = (await _until(ws, "response.completed")).response
            await ws.response.create(**_body(6), previous_response_id="resp_unknown", input="x")
            missing = await _until(ws, "error")
            assert missing.status == 400
            assert missing.error.type == "invalid_request_error"
            assert missing.error.code == "previous_response_not_found"
            assert missing.error.param == "previous_response_id"
            stray = {"type": "function_call_output", "call_id": "call_nope", "output": "y"}
            await ws.response.create(**_body(6), input=[stray], previous_response_id=parent.id)
            assert (await _until(ws, "error")).error.code == "invalid_value"
            answer = {"type": "function_call_output", "call_id": parent.output[-1].call_id}
            answer["output"] = "z"
            await ws.response.create(
                **_body(6), input=[answer], previous_response_id=parent.id, store=False
            )
            evicted = await _until(ws, "error", "response.completed")
            assert evicted.type == "error"
            assert evicted.error.code == "previous_response_not_found"
            return {"warm": warm.id, "parent": parent.id}

    ids = clock.run(main)
    records = {r.get("response_id"): r for r in clock.run(lambda: _log(base_url))}
    assert records[ids["warm"]]["generate"] is False
    assert records[ids["parent"]]["source"] == "cache"


def test_bad_frames_get_an_error_event_and_the_connection_stays_usable(base_url: str) -> None:
    url = base_url.replace("http://", "ws://") + "/responses"
    headers = {"Authorization": f"Bearer {KEY}", CALIBRATION_HEADER: "1"}

    async def main() -> list[str]:
        codes = []
        async with websockets.connect(url, additional_headers=headers, max_size=None) as ws:
            for frame in (
                "{not json",
                json.dumps({"type": "response.fly"}),
                json.dumps({"type": "response.create", "pad": "p" * (MAX_FRAME_BYTES + 1)}),
            ):
                await ws.send(frame)
                event = json.loads(await ws.recv())
                assert event["type"] == "error" and event["status"] == 400
                codes.append(event["error"]["code"])
            await ws.send(json.dumps({"type": "response.create", **_body(7), "input": "ok"}))
            while (event := json.loads(await ws.recv()))["type"] != "response.completed":
                pass
        return codes

    assert clock.run(main) == ["invalid_json", "unknown_event_type", "frame_too_large"]


@pytest.fixture(scope="module")
def slow_url() -> Iterator[str]:
    """An emulator at scenario speed: a response takes long enough to be left mid-way."""
    with emulator_process(scenario("codex-spark"), ServerSettings()) as url:
        yield url


def test_a_client_leaving_mid_response_leaves_no_server_task_behind(slow_url: str) -> None:
    base_url = slow_url

    async def settled() -> dict[str, Any]:
        deadline_s = time.monotonic() + 10.0
        while True:
            stats = await _stats(base_url)
            idle = stats["in_flight"] == 0 and stats["background"] == 0
            if (idle and stats["open_sockets"] == 0) or time.monotonic() > deadline_s:
                return stats
            await asyncio.sleep(0.05)

    async def main() -> tuple[int, dict[str, Any]]:
        before = (await settled())["tasks"]
        for _ in range(3):
            client = _client(base_url)
            ws = await client.responses.connect().enter()
            await ws.response.create(**_body(8), input="task")
            await _until(ws, "response.created")
            await ws.close()
            stream = await client.responses.create(**_body(9), input="task", stream=True)
            async for event in stream:
                if event.type == "response.created":
                    break
            await stream.close()
            await client.close()
        return before, await settled()

    before, after = clock.run(main)
    assert after["in_flight"] == 0 and after["open_sockets"] == 0
    assert after["tasks"] == before
    assert all(busy == 0 for busy in after["busy"].values())
    finished = [r for r in clock.run(lambda: _log(base_url)) if r["status"] == "completed"]
    assert finished == [], "every response was left before it completed"


def test_two_hundred_websocket_connections_are_held_at_once(base_url: str) -> None:
    async def main() -> tuple[list[str], int]:
        async with _client(base_url) as client:
            sockets = await asyncio.gather(
                *(client.responses.connect().enter() for _ in range(200))
            )
            held = (await _stats(base_url))["open_sockets"]

            async def turn(index: int, ws: Any) -> str:
                await ws.response.create(**_body(100 + index), input="task")
                return (await _until(ws, "response.completed", "error")).type

            kinds = await asyncio.gather(*(turn(i, ws) for i, ws in enumerate(sockets)))
            await asyncio.gather(*(ws.close() for ws in sockets))
        return kinds, held

    kinds, held = clock.run(main)
    assert held == 200
    assert kinds == ["response.completed"] * 200
