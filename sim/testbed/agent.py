"""The agent's side of a rollout: its prompt, its tools and an SDK client that counts connections.

The instructions, tool definitions, the user's task and every tool output are
text of the scenario's token counts (``bytes_per_token`` characters a token),
so the emulator counts the same tokens the simulation assumes.  The SDK client
is the official ``AsyncOpenAI`` on its default HTTP client, with two hooks an
agent developer could add: an idle timeout for the keep-alive pool (the
scenario's, time-scaled) and an httpx trace that counts new TCP connections
and requests sent (retries included).
"""

from __future__ import annotations

import json
import math
import ssl
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpx2
from openai import AsyncOpenAI, DefaultAsyncHttpxClient

from models.scenario import Scenario
from sim.testbed.protocol import padded

MODEL = "loopbudget-emulated"
REQUEST_TIMEOUT_S = 120.0
_TOOL_PARAMETERS = {
    "type": "object",
    "properties": {"input": {"type": "string"}},
    "required": ["input"],
}


@dataclass(frozen=True)
class Prompt:
    """What every request of the agent carries besides the conversation."""

    instructions: str
    tools: list[dict[str, Any]]
    task: str

    @classmethod
    def of(cls, scenario: Scenario) -> Prompt:
        w, per_token = scenario.workload, scenario.network.bytes_per_token
        names = [tool.name for tool in w.tools]
        schema_chars = sum(len(name) + len(json.dumps(_TOOL_PARAMETERS)) for name in names)
        described = max(0, round(w.tool_definitions_tokens * per_token) - schema_chars)
        tools = [
            {
                "type": "function",
                "name": name,
                "description": padded(described // len(names) + (i < described % len(names))),
                "parameters": _TOOL_PARAMETERS,
                "strict": False,
            }
            for i, name in enumerate(names)
        ]
        return cls(
            instructions=padded(round(w.instructions_tokens * per_token)),
            tools=tools,
            task=padded(round(w.first_message_tokens * per_token)),
        )


def tool_output_text(tokens: float, bytes_per_token: float) -> str:
    return padded(round(tokens * bytes_per_token))


class ConnectionCounter:
    """Counts the new TCP connections and the requests an httpx client makes, and when the
    last request's body was written to its socket."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests = 0
        self.last_request_at_s = math.nan
        """When the last request left (NaN before the first)."""

    async def trace(self, name: str, info: dict[str, Any]) -> None:
        if name == "connection.connect_tcp.complete":
            self.connections += 1
        elif name == "http11.send_request_body.complete":
            self.last_request_at_s = time.monotonic()

    async def on_request(self, request: httpx2.Request) -> None:
        self.requests += 1
        request.extensions["trace"] = self.trace


@cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every client: building one loads the trust store (tens of ms)."""
    return ssl.create_default_context()


def sdk_client(
    base_url: str, api_key: str, keepalive_idle_s: float, counter: ConnectionCounter
) -> AsyncOpenAI:
    """The official async client, its keep-alive pool expiring idle connections like the
    scenario's client, counting connections and requests.  Each client has its own pool,
    so a rollout on a new client starts on a new connection, as in the simulation."""
    limits = httpx2.Limits(
        max_connections=1000, max_keepalive_connections=100, keepalive_expiry=keepalive_idle_s
    )
    http_client = DefaultAsyncHttpxClient(
        transport=httpx2.AsyncHTTPTransport(verify=_tls_context(), limits=limits),
        timeout=httpx2.Timeout(REQUEST_TIMEOUT_S, connect=10.0),
        event_hooks={"request": [counter.on_request]},
    )
    return AsyncOpenAI(base_url=base_url, api_key=api_key, http_client=http_client)
