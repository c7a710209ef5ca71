"""What the emulated service says about its own time, in the fields the real service uses.

Over HTTP every response carries ``x-request-id`` and ``openai-processing-ms``:
the server's milliseconds from taking the request to sending the headers (for
a JSON body that is the whole response; a stream sends its headers when the
request is taken, so there it is the intake alone).  Over WebSocket mode a
``responsesapi.websocket_timing`` event follows each ``response.completed``,
its ``timing_metrics`` splitting the response's span into API overhead and the
engine's time, from what the emulator applied (its log record of the response):
the engine's service time is prefill plus decode (as stretched by the batch),
the API's view of the engine adds the wait for an inference slot, and the API
overhead is the rest of the span.  The field names are the service's own, as
Codex records them (openai/codex, ``codex-rs/otel/src/events/session_telemetry.rs``).
"""

from __future__ import annotations

import time
from typing import Any

from sim.testbed.protocol import Event, new_id

PROCESSING_HEADER = "openai-processing-ms"
REQUEST_ID_HEADER = "x-request-id"
TIMING_EVENT = "responsesapi.websocket_timing"
API_OVERHEAD_FIELD = "responses_duration_excl_engine_and_client_tool_time_ms"
ENGINE_TOTAL_FIELD = "engine_service_total_ms"
ENGINE_TTFT_FIELD = "engine_service_ttft_total_ms"
IAPI_TTFT_FIELD = "engine_iapi_ttft_total_ms"
ENGINE_TBT_FIELD = "engine_service_tbt_across_engine_calls_ms"
IAPI_TBT_FIELD = "engine_iapi_tbt_across_engine_calls_ms"


def service_headers(arrived_s: float) -> dict[str, str]:
    """The headers of an HTTP response sent now for a request taken at ``arrived_s``."""
    processing_ms = (time.monotonic() - arrived_s) * 1e3
    return {REQUEST_ID_HEADER: new_id("req"), PROCESSING_HEADER: f"{processing_ms:.0f}"}


def websocket_timing(record: dict[str, Any]) -> Event:
    """The timing event of one completed response, from its log record."""
    stage_s, wait_s = record["stage_s"], record["wait_s"]
    prefill_s, decode_s = stage_s["prefill"], stage_s["decode"]
    engine_s = prefill_s + decode_s
    slot_wait_s = wait_s.get("inference", 0.0)
    span_s = record["completed_at_s"] - record["arrived_at_s"]
    tokens = max(1.0, record["output_tokens"])
    return {
        "type": TIMING_EVENT,
        "response_id": record["response_id"],
        "timing_metrics": {
            API_OVERHEAD_FIELD: max(0.0, span_s - engine_s - slot_wait_s) * 1e3,
            ENGINE_TOTAL_FIELD: engine_s * 1e3,
            ENGINE_TTFT_FIELD: prefill_s * 1e3,
            IAPI_TTFT_FIELD: (slot_wait_s + prefill_s) * 1e3,
            ENGINE_TBT_FIELD: decode_s / tokens * 1e3,
            IAPI_TBT_FIELD: decode_s / tokens * 1e3,
        },
    }
