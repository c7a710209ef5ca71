"""A Responses API server of another shape than the emulator, for the driver's tests.

Its model decides for itself: each conversation gets a number of tool-calling
turns of its own (seeded per conversation), each response opens with a reasoning
item and asks for one to three function calls (sometimes with a message beside
them, sometimes naming a tool the client never declared), and the conversation
ends with a final message.  It speaks JSON, server-sent events and WebSocket mode
on ``/v1/responses``, keeps stored responses for ``previous_response_id`` and
finds a resent conversation by its call ids.  It answers at once (no latency of
its own); ``plans`` keeps what it decided, so a test can check what the client saw.
"""

from __future__ import annotations

import json
import random
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

UNDECLARED_TOOL = "open_browser"


@dataclass
class Plan:
    """What the model does in one conversation: the calls of each tool-calling turn."""

    calls_per_turn: list[int]
    turns_served: int = 0
    call_ids: set[str] = field(default_factory=set)


class ForeignModel:
    """Conversations, stored responses and the decisions of the model."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self.plans: list[Plan] = []
        self._by_response: dict[str, Plan] = {}
        self._by_call: dict[str, Plan] = {}

    def _plan_of(self, body: dict[str, Any]) -> Plan:
        previous = body.get("previous_response_id")
        if previous is not None:
            return self._by_response[previous]
        items = body.get("input")
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("call_id") in self._by_call:
                return self._by_call[item["call_id"]]
        turns = self._rng.randint(1, 6)
        plan = Plan([self._rng.randint(1, 3) for _ in range(turns)])
        self.plans.append(plan)
        return plan

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completed response to ``body``."""
        plan = self._plan_of(body)
        turn = plan.turns_served
        plan.turns_served += 1
        names = [t["name"] for t in body.get("tools") or []] or ["search"]
        output: list[dict[str, Any]] = [
            {
                "type": "reasoning",
                "id": _id("rs"),
                "summary": [{"type": "summary_text", "text": "thinking it over"}],
            }
        ]
        if turn < len(plan.calls_per_turn):
            if turn % 2 == 1:
                output.append(_message("Looking into it."))
            for index in range(plan.calls_per_turn[turn]):
                name = UNDECLARED_TOOL if (turn, index) == (0, 2) else self._rng.choice(names)
                call_id = _id("call")
                plan.call_ids.add(call_id)
                self._by_call[call_id] = plan
                output.append(
                    {
                        "type": "function_call",
                        "id": _id("fc"),
                        "call_id": call_id,
                        "name": name,
                        "arguments": json.dumps({"input": "x" * 40}),
                        "status": "completed",
                    }
                )
        else:
            output.append(_message("Done: the bug is fixed."))
        response = {
            "id": _id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": str(body.get("model", "")),
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools") or [],
            "previous_response_id": body.get("previous_response_id"),
            "usage": {
                "input_tokens": 1000,
                "input_tokens_details": {"cached_tokens": 800},
                "output_tokens": 120,
                "output_tokens_details": {"reasoning_tokens": 60},
                "total_tokens": 1120,
            },
        }
        self._by_response[response["id"]] = plan
        return response


def events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The stream of one response: created, each item added and done, completed."""
    head = {**response, "status": "in_progress", "output": [], "usage": None}
    yield {"type": "response.created", "response": head}
    for index, item in enumerate(response["output"]):
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    yield {"type": "response.completed", "response": response}


def app(model: ForeignModel) -> Starlette:
    async def http(request: Request) -> Any:
        body = await request.json()
        response = model.respond(body)
        if not body.get("stream"):
            return JSONResponse(response)
        numbered = ({**event, "sequence_number": n} for n, event in enumerate(events(response)))
        chunks = (f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in numbered)
        return StreamingResponse(chunks, media_type="text/event-stream")

    async def websocket(ws: WebSocket) -> None:
        await ws.accept()
        try:
            while True:
                body = json.loads(await ws.receive_text())
                for n, event in enumerate(events(model.respond(body))):
                    await ws.send_text(json.dumps({**event, "sequence_number": n}))
        except WebSocketDisconnect:
            return

    return Starlette(
        routes=[
            Route("/v1/responses", http, methods=["POST"]),
            WebSocketRoute("/v1/responses", websocket),
        ]
    )


@contextmanager
def foreign_server(seed: int = 7) -> Iterator[tuple[str, ForeignModel]]:
    """Serve a ``ForeignModel`` on a free port of 127.0.0.1 in a thread; its base URL."""
    model = ForeignModel(seed)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    config = uvicorn.Config(app(model), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", model
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()


def _id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": _id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
