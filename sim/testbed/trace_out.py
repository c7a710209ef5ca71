"""The testbed's measured rollouts as trace requests, so ``--otel`` writes them as spans.

One request per turn, with the driver's own times: the request's start (the agent
starts building it), its first output event, its end (``response.completed`` read);
each tool call from when the client started it to when its answer was ready; the
usage the response reported; and what the server said about itself where it sent
it (``openai-processing-ms`` over HTTP, the ``responsesapi.websocket_timing``
event over WebSocket mode).  The driver's clock is ``time.monotonic()``; one
offset taken when the rows are made puts it on the epoch, as the trace table asks.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence

from sim.testbed.agent import MODEL
from sim.testbed.records import RolloutRecord, TurnRecord
from sim.testbed.timing import API_OVERHEAD_FIELD, ENGINE_TOTAL_FIELD, ENGINE_TTFT_FIELD
from sim.traces.table import Request, ToolCall

FORMAT = "loopbudget-testbed"


def epoch_offset_s() -> float:
    """Seconds to add to ``time.monotonic()`` for epoch seconds (now)."""
    return time.time() - time.monotonic()


def rollout_requests(
    rollouts: Sequence[RolloutRecord],
    label: str,
    transport: str,
    server_address: str,
    offset_s: float,
) -> Iterator[list[Request]]:
    """Each rollout's requests in order; rollout ids are ``{label}/{rollout}``."""
    for rollout in rollouts:
        rollout_id = f"{label}/{rollout.rollout}"
        requests, connections = [], 0
        for turn in rollout.turns:
            connections += turn.new_connections
            connection_id = f"{rollout_id}/connection/{max(connections - 1, 0)}"
            requests.append(
                _request(turn, rollout_id, transport, server_address, connection_id, offset_s)
            )
        yield requests


def _request(
    turn: TurnRecord,
    rollout_id: str,
    transport: str,
    server_address: str,
    connection_id: str,
    offset_s: float,
) -> Request:
    usage, timing = turn.usage, turn.server_timing_ms
    first = turn.first_output_at_s
    return Request(
        rollout_id=rollout_id,
        request_index=turn.turn,
        start_s=turn.started_at_s + offset_s,
        end_s=turn.completed_at_s + offset_s,
        source="loopbudget testbed",
        format=FORMAT,
        transport=transport,
        first_output_s=None if math.isnan(first) else first + offset_s,
        input_tokens=usage.get("input_tokens"),
        cached_input_tokens=usage.get("cached_tokens"),
        output_tokens=usage.get("output_tokens", _whole(turn.output_tokens)),
        reasoning_tokens=usage.get("reasoning_tokens"),
        model=MODEL,
        server_address=server_address,
        response_id=turn.response_id,
        previous_response_id=turn.previous_response_id,
        connection_id=connection_id,
        connection_reused=turn.new_connections == 0,
        server_processing_ms=turn.processing_ms,
        server_api_overhead_ms=timing.get(API_OVERHEAD_FIELD),
        server_engine_ms=timing.get(ENGINE_TOTAL_FIELD),
        server_engine_ttft_ms=timing.get(ENGINE_TTFT_FIELD),
        tool_calls=tuple(
            ToolCall(c.call_id, c.tool_name, c.started_at_s + offset_s, c.ended_at_s + offset_s)
            for c in turn.tool_calls
        ),
    )


def _whole(tokens: float) -> int | None:
    return None if math.isnan(tokens) else round(tokens)
