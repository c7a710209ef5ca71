"""The emulator's per-request log: what each request processed, waited and was charged.

The driver reads it (``GET /v1/testbed/log``) to put the server's stage times
beside its own timestamps; the SDK never needs it to parse a response.  Times
are ``time.monotonic()`` seconds, one clock for every process on the machine.
"""

from __future__ import annotations

import math
from typing import Any

from models.stages import Stage
from sim.testbed.intake import Prepared

_SERVER_STAGES = tuple(s for s in Stage if s.group.value in {"api", "safety", "inference"})


class RequestLog:
    """Records in arrival order of completion; read from an offset."""

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []
        self._completed: dict[str, dict[str, Any]] = {}

    def completed(
        self,
        p: Prepared,
        transport: str,
        connection: int | None,
        arrived_s: float,
        first_output_s: float,
        completed_s: float,
        stage_s: dict[Stage, float],
        waits_s: dict[str, float],
        held_s: dict[str, float],
    ) -> None:
        w = p.processed
        self._records.append(
            {
                "response_id": p.head.response_id,
                "status": "completed",
                "transport": transport,
                "connection": connection,
                "rollout": p.rollout,
                "replication": p.replication,
                "turn": p.turn,
                "source": w.source.value,
                "generate": p.generate,
                "items_new": w.items_new,
                "items_in_context": w.items_in_context,
                "new_tokens": w.new_tokens,
                "prior_tokens": w.prior_tokens,
                "fixed_tokens": w.fixed_tokens,
                "output_tokens": w.output_tokens,
                "arrived_at_s": arrived_s,
                "first_output_at_s": None if math.isnan(first_output_s) else first_output_s,
                "completed_at_s": completed_s,
                "stage_s": {stage.value: stage_s[stage] for stage in _SERVER_STAGES},
                "wait_s": waits_s,
                "held_s": held_s,
            }
        )
        self._completed[p.head.response_id] = self._records[-1]

    def refused(self, transport: str, code: str, arrived_s: float, answered_s: float) -> None:
        self._records.append(
            {
                "status": "refused",
                "transport": transport,
                "error_code": code,
                "arrived_at_s": arrived_s,
                "completed_at_s": answered_s,
            }
        )

    def completed_record(self, response_id: str) -> dict[str, Any]:
        """The record of a completed response."""
        return self._completed[response_id]

    def since(self, offset: int) -> list[dict[str, Any]]:
        return self._records[offset:]

    def __len__(self) -> int:
        return len(self._records)
