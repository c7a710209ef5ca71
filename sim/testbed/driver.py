"""Agent loops written against the official openai SDK, one per transport: the server decides.

``http``: ``responses.create(stream=True)`` continuing with ``previous_response_id``
(``store=True``); ``http-full``: the whole history resent, ``store=False``;
``ws``: ``client.responses.connect()``, a ``response.create`` per turn with only
the new input, reconnecting when the server closed the socket and resending
everything after ``previous_response_not_found``.  Every rollout starts on a
new connection, as in the simulation.

Each loop is a real agent's: every tool call of a response is answered (at once
when the scenario's client runs calls in parallel, else one after another), each
tool sleeping for its drawn time (``tools``) and answering with text of its drawn
size; reasoning and message items stay in the history; a response without a tool
call ends the rollout.  A turn limit stops a server that never stops calling
tools (the rollout is marked).  Against the emulator the server follows the
scenario's script, so the rollout is the simulation's rollout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from openai import AsyncOpenAI, omit
from websockets.exceptions import ConnectionClosed

from models.scenario import Scenario
from sim.testbed.agent import MODEL, ConnectionCounter, Prompt, sdk_client, tool_output_text
from sim.testbed.app import CALIBRATION_HEADER
from sim.testbed.clock import TimerLead
from sim.testbed.conversation import Conversation, answer, tool_calls
from sim.testbed.records import CallRecord, RolloutRecord, TurnRecord
from sim.testbed.script import REPLICATION_KEY, ROLLOUT_KEY
from sim.testbed.sdk_warmup import warm_parsers
from sim.testbed.server_events import ServerTimes, error_code, failure, number
from sim.testbed.timing import PROCESSING_HEADER, TIMING_EVENT
from sim.testbed.tools import DrawnBlocks, ToolDraws
from sim.turn.transports import Transport

NOT_FOUND = "previous_response_not_found"
DEFAULT_TURN_LIMIT = 256
"""Requests a rollout may make before the driver stops it (a server that never answers)."""
_MAX_ATTEMPTS = 8
_ENDED = ("response.completed", "response.incomplete")
"""Stream events that carry a finished response (an incomplete one is still an answer)."""


class Agent:
    """Runs rollouts of one scenario through the SDK against ``base_url``."""

    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        base_url: str,
        api_key: str,
        lead: TimerLead,
        calibration: bool = False,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        drawn: DrawnBlocks | None = None,
    ) -> None:
        if transport is Transport.WS_APPEND:
            raise ValueError("ws-append (one long response per rollout) has no SDK loop")
        self.scenario, self.transport = scenario, transport
        self.base_url, self.api_key, self.lead = base_url, api_key, lead
        self.prompt = Prompt.of(scenario)
        self.headers = {CALIBRATION_HEADER: "1"} if calibration else {}
        self.turn_limit = turn_limit
        self.parallel = scenario.workload.parallel
        self._drawn = drawn or DrawnBlocks(scenario)
        warm_parsers()

    @asynccontextmanager
    async def sdk(self, counter: ConnectionCounter | None = None) -> AsyncIterator[AsyncOpenAI]:
        """A new SDK client (a new connection pool), closed on exit."""
        idle_s = self.scenario.client.keepalive_idle_s
        client = sdk_client(self.base_url, self.api_key, idle_s, counter or ConnectionCounter())
        try:
            yield client
        finally:
            await client.close()

    def request_body(self, rollout: int, replication: int) -> dict[str, Any]:
        return {
            "model": MODEL,
            "instructions": self.prompt.instructions,
            "tools": self.prompt.tools,
            "metadata": {ROLLOUT_KEY: str(rollout), REPLICATION_KEY: str(replication)},
        }

    async def rollout(
        self, rollout: int, replication: int = 0, max_turns: int | None = None
    ) -> RolloutRecord:
        """Run rollout ``rollout`` until the server answers without a tool call (or only its
        first ``max_turns`` turns: a calibration cut, not a runaway)."""
        tools = self._drawn.tools(rollout, replication)
        loop = _Loop(self, rollout, replication, tools, max_turns)
        counter = ConnectionCounter()
        async with self.sdk(counter) as client:
            if self.transport.is_websocket:
                await loop.over_websocket(client)
            else:
                await loop.over_http(client, counter)
        return RolloutRecord(rollout, loop.records, loop.turn_limited)

    async def run_tools(
        self, record: TurnRecord, tools: ToolDraws, calls: list[Any]
    ) -> list[dict[str, Any]]:
        """Run the response's tool calls (sleep for their drawn times); their answers."""
        per_token = self.scenario.network.bytes_per_token
        draws = [tools.call(record.turn, i, call.name) for i, call in enumerate(calls)]
        times_s = [seconds for seconds, _ in draws]
        record.drawn_tool_s = max(times_s) if self.parallel else sum(times_s)
        started_s = time.monotonic()
        if self.parallel and len(calls) > 1:
            ran = await asyncio.gather(
                *(self._tool(call, s) for call, s in zip(calls, times_s, strict=True))
            )
        else:
            ran = [await self._tool(call, s) for call, s in zip(calls, times_s, strict=True)]
        record.tool_s = time.monotonic() - started_s
        record.tool_calls = list(ran)
        return [
            answer(call, tool_output_text(tokens, per_token))
            for call, (_, tokens) in zip(calls, draws, strict=True)
        ]

    async def _tool(self, call: Any, seconds: float) -> CallRecord:
        """One tool call: sleep its drawn time; when it ran."""
        started_s = time.monotonic()
        await self.lead.sleep(seconds)
        return CallRecord(str(call.call_id), str(call.name), started_s, time.monotonic())


class _Loop:
    """One rollout's loop: its conversation, its turns and where it stops."""

    def __init__(
        self,
        agent: Agent,
        rollout: int,
        replication: int,
        tools: ToolDraws,
        max_turns: int | None,
    ) -> None:
        self.agent, self.rollout, self.tools = agent, rollout, tools
        self.common = agent.request_body(rollout, replication)
        self.conversation = Conversation(agent.prompt.task, agent.scenario.network.bytes_per_token)
        self.max_turns = min(max_turns or agent.turn_limit, agent.turn_limit)
        self.cut = max_turns is not None and max_turns < agent.turn_limit
        self.records: list[TurnRecord] = []
        self.turn_limited = False
        self.server_times = ServerTimes()

    def new_turn(self) -> TurnRecord:
        return TurnRecord(self.rollout, len(self.records), time.monotonic())

    async def answered(self, record: TurnRecord, response: Any) -> bool:
        """Record the turn; run its tools.  True when the rollout goes on."""
        record.completed_at_s = time.monotonic()
        record.response_id = response.id
        self.server_times.answered(record)
        self.conversation.answered(response, record)
        self.records.append(record)
        calls = tool_calls(list(response.output))
        record.calls = len(calls)
        if not calls:
            return False
        if len(self.records) >= self.max_turns:
            self.turn_limited = not self.cut
            return False
        answers = await self.agent.run_tools(record, self.tools, calls)
        self.conversation.continue_after(response, record, answers)
        return True

    async def over_http(self, client: AsyncOpenAI, counter: ConnectionCounter) -> None:
        resend = self.agent.transport is Transport.HTTP_FULL
        conversation = self.conversation
        while True:
            record = self.new_turn()
            connections, requests = counter.connections, counter.requests
            sent = conversation.sent(record, resend)
            record.previous_response_id = None if resend else conversation.previous_id
            stream = await client.responses.create(
                **self.common,
                input=sent,
                previous_response_id=record.previous_response_id or omit,
                store=not resend,
                stream=True,
            )
            record.sent_at_s = counter.last_request_at_s
            record.processing_ms = number(stream.response.headers.get(PROCESSING_HEADER))
            response = None
            async for event in stream:
                if event.type == "response.output_item.added":
                    if record.first_output_at_s != record.first_output_at_s:
                        record.first_output_at_s = time.monotonic()
                elif event.type in _ENDED:
                    response = event.response
                    record.received_at_s = counter.last_chunk_at_s
                elif event.type in ("response.failed", "error"):
                    raise RuntimeError(f"rollout {self.rollout}: {failure(event)}")
            if response is None:
                raise RuntimeError(f"rollout {self.rollout}: the stream ended without a response")
            record.new_connections = counter.connections - connections
            record.retries = counter.requests - requests - 1
            if not await self.answered(record, response):
                return

    async def over_websocket(self, client: AsyncOpenAI) -> None:
        store = self.agent.scenario.connection.store
        connection = None
        try:
            while True:
                record = self.new_turn()
                for _ in range(_MAX_ATTEMPTS):
                    if connection is None:
                        manager = client.responses.connect(extra_headers=self.agent.headers)
                        connection = await manager.enter()
                        record.new_connections += 1
                    attempt_s = time.monotonic()
                    try:
                        outcome = await self._ws_attempt(connection, store, record)
                    except ConnectionClosed:
                        connection = None
                        record.retries += 1
                        continue
                    if outcome == NOT_FOUND:
                        record.recoveries += 1
                        record.recover_s += time.monotonic() - attempt_s
                        self.conversation.restart()
                        continue
                    break
                else:
                    raise RuntimeError(
                        f"rollout {self.rollout} turn {record.turn}: {record.errors}"
                    )
                if not await self.answered(record, outcome):
                    await self.server_times.last(connection, self.records[-1])
                    return
        finally:
            if connection is not None:
                await connection.close()

    async def _ws_attempt(self, connection: Any, store: bool, record: TurnRecord) -> Any:
        """One ``response.create``: the finished response, or an error's code."""
        previous_id = self.conversation.previous_id
        record.previous_response_id = previous_id
        await connection.response.create(
            **self.common,
            input=self.conversation.sent(record, resend=False),
            previous_response_id=omit if previous_id is None else previous_id,
            store=store,
        )
        record.sent_at_s = time.monotonic()
        while True:
            # The public pair recv() is made of, so the frame's arrival is timed apart
            # from the SDK's parsing of it.
            data = await connection.recv_bytes()
            received_s = time.monotonic()
            event = connection.parse_event(data)
            if event.type == "response.output_item.added":
                if record.first_output_at_s != record.first_output_at_s:
                    record.first_output_at_s = time.monotonic()
            elif event.type in _ENDED:
                record.received_at_s = received_s
                return event.response
            elif event.type == TIMING_EVENT:
                self.server_times.note(event)
            elif event.type in ("error", "response.failed"):
                code = error_code(event)
                record.errors.append(code)
                if code != NOT_FOUND:
                    raise RuntimeError(f"rollout {self.rollout}: {failure(event)}")
                return NOT_FOUND
