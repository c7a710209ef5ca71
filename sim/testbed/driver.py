"""Agent loops written against the official openai SDK, one per transport, recording every turn.

``http``: ``responses.create(stream=True)`` continuing with ``previous_response_id``
(``store=True``); ``http-full``: the whole history resent, ``store=False``;
``ws``: ``client.responses.connect()``, a ``response.create`` per turn with only
the new input, reconnecting when the server closed the socket and resending
everything after ``previous_response_not_found``.  Every rollout starts on a
new connection, as in the simulation.  Tools sleep for the seeded draws of the
simulation's workload (common random numbers), and their outputs are text of
the drawn size.
"""

from __future__ import annotations

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
from sim.testbed.records import RolloutRecord, TurnRecord
from sim.testbed.script import REPLICATION_KEY, ROLLOUT_KEY, TurnBlocks
from sim.turn.transports import Transport
from sim.turn.turns import Turns

NOT_FOUND = "previous_response_not_found"
_MAX_ATTEMPTS = 8


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
        blocks: TurnBlocks | None = None,
    ) -> None:
        if transport is Transport.WS_APPEND:
            raise ValueError("ws-append (one long response per rollout) has no SDK loop")
        self.scenario, self.transport = scenario, transport
        self.base_url, self.api_key, self.lead = base_url, api_key, lead
        self.prompt = Prompt.of(scenario)
        self.headers = {CALIBRATION_HEADER: "1"} if calibration else {}
        self._blocks = blocks or TurnBlocks(scenario)

    def _plan(self, rollout: int, replication: int) -> tuple[Turns, int, int]:
        return self._blocks.rollout(rollout, replication)

    @asynccontextmanager
    async def sdk(self, counter: ConnectionCounter | None = None) -> AsyncIterator[AsyncOpenAI]:
        """A new SDK client (a new connection pool), closed on exit."""
        idle_s = self.scenario.client.keepalive_idle_s
        client = sdk_client(self.base_url, self.api_key, idle_s, counter or ConnectionCounter())
        try:
            yield client
        finally:
            await client.close()

    def _request(self, rollout: int, replication: int) -> dict[str, Any]:
        return {
            "model": MODEL,
            "instructions": self.prompt.instructions,
            "tools": self.prompt.tools,
            "metadata": {ROLLOUT_KEY: str(rollout), REPLICATION_KEY: str(replication)},
        }

    async def rollout(
        self, rollout: int, replication: int = 0, max_turns: int | None = None
    ) -> RolloutRecord:
        """Run rollout ``rollout`` of the seeded workload (its first ``max_turns`` turns)."""
        turns, first, end = self._plan(rollout, replication)
        if max_turns is not None:
            end = min(end, first + max_turns)
        counter = ConnectionCounter()
        async with self.sdk(counter) as client:
            if self.transport.is_websocket:
                return await self._ws_rollout(client, rollout, replication, turns, first, end)
            return await self._http_rollout(
                client, counter, rollout, replication, turns, first, end
            )

    async def _tool(self, record: TurnRecord, turns: Turns, row: int, end: int) -> Any:
        """Run the turn's tool (sleep for its drawn time); its output for the next turn."""
        per_token = self.scenario.network.bytes_per_token
        started_s = time.monotonic()
        await self.lead.sleep(float(turns.tool_s[row]))
        record.tool_s = time.monotonic() - started_s
        return tool_output_text(float(turns.new_tokens[row + 1]), per_token)

    async def _http_rollout(
        self,
        client: AsyncOpenAI,
        counter: ConnectionCounter,
        rollout: int,
        replication: int,
        turns: Turns,
        first: int,
        end: int,
    ) -> RolloutRecord:
        resend = self.transport is Transport.HTTP_FULL
        common = self._request(rollout, replication)
        history: list[Any] = [{"role": "user", "content": self.prompt.task}]
        new_input, previous_id = list(history), None
        records = []
        for row in range(first, end):
            record = TurnRecord(rollout, row - first, time.monotonic())
            connections, requests = counter.connections, counter.requests
            sent = history if resend else new_input
            record.items_sent = len(sent)
            stream = await client.responses.create(
                **common,
                input=sent,
                previous_response_id=omit if resend or previous_id is None else previous_id,
                store=not resend,
                stream=True,
            )
            record.sent_at_s = counter.last_request_at_s
            response = None
            async for event in stream:
                if event.type == "response.output_item.added" and response is None:
                    if record.first_output_at_s != record.first_output_at_s:
                        record.first_output_at_s = time.monotonic()
                elif event.type == "response.completed":
                    response = event.response
            record.completed_at_s = time.monotonic()
            record.new_connections = counter.connections - connections
            record.retries = counter.requests - requests - 1
            record.response_id = response.id
            records.append(record)
            if row == end - 1:
                break
            call = response.output[-1]
            output = await self._tool(record, turns, row, end)
            answer = {"type": "function_call_output", "call_id": call.call_id, "output": output}
            history.extend([*response.output, answer])
            new_input, previous_id = [answer], response.id
        return RolloutRecord(rollout, records)

    async def _ws_rollout(
        self,
        client: AsyncOpenAI,
        rollout: int,
        replication: int,
        turns: Turns,
        first: int,
        end: int,
    ) -> RolloutRecord:
        common = self._request(rollout, replication)
        store = self.scenario.connection.store
        history: list[Any] = [{"role": "user", "content": self.prompt.task}]
        new_input, previous_id = list(history), None
        connection, records = None, []
        try:
            for row in range(first, end):
                record = TurnRecord(rollout, row - first, time.monotonic())
                for _ in range(_MAX_ATTEMPTS):
                    if connection is None:
                        manager = client.responses.connect(extra_headers=self.headers)
                        connection = await manager.enter()
                        record.new_connections += 1
                    attempt_s = time.monotonic()
                    try:
                        outcome = await self._ws_attempt(
                            connection, common, new_input, previous_id, store, record
                        )
                    except ConnectionClosed:
                        connection = None
                        record.retries += 1
                        continue
                    if outcome == NOT_FOUND:
                        record.recoveries += 1
                        record.recover_s += time.monotonic() - attempt_s
                        new_input, previous_id = list(history), None
                        continue
                    break
                else:
                    raise RuntimeError(f"rollout {rollout} turn {row - first}: {record.errors}")
                response = outcome
                record.completed_at_s = time.monotonic()
                record.response_id = response.id
                records.append(record)
                if row == end - 1:
                    break
                call = response.output[-1]
                output = await self._tool(record, turns, row, end)
                answer = {"type": "function_call_output", "call_id": call.call_id, "output": output}
                history.extend([*response.output, answer])
                new_input, previous_id = [answer], response.id
        finally:
            if connection is not None:
                await connection.close()
        return RolloutRecord(rollout, records)

    async def _ws_attempt(
        self,
        connection: Any,
        common: dict[str, Any],
        new_input: list[Any],
        previous_id: str | None,
        store: bool,
        record: TurnRecord,
    ) -> Any:
        """One ``response.create``: the completed response, or an error's code."""
        record.items_sent = len(new_input)
        await connection.response.create(
            **common,
            input=new_input,
            previous_response_id=omit if previous_id is None else previous_id,
            store=store,
        )
        record.sent_at_s = time.monotonic()
        while True:
            event = await connection.recv()
            if event.type == "response.output_item.added":
                if record.first_output_at_s != record.first_output_at_s:
                    record.first_output_at_s = time.monotonic()
            elif event.type == "response.completed":
                return event.response
            elif event.type == "error":
                record.errors.append(event.error.code or event.error.type)
                if event.error.code != NOT_FOUND:
                    raise RuntimeError(f"error event: {event.error.code}: {event.error.message}")
                return NOT_FOUND
