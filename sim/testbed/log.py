"""The emulator's per-request log: what each request processed, waited and was charged.

The driver reads it (``GET /v1/testbed/log``) to put the server's stage times
beside its own timestamps; the SDK never needs it to parse a response.  Times
are ``time.monotonic()`` seconds, one clock for every process on the machine.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict, deque
from typing import Any

from models.stages import Stage
from sim.testbed.intake import Prepared

_SERVER_STAGES = tuple(s for s in Stage if s.group.value in {"api", "safety", "inference"})


KEPT_RECORDS = 200_000
"""Records the log keeps (the oldest go first): a reader that falls further behind misses
some, and a server that runs for days stays within its memory."""


class RequestLog:
    """Records in arrival order of completion; read from an offset (counting every record
    ever written, so offsets stay valid when the oldest are dropped)."""

    def __init__(self, kept: int = KEPT_RECORDS) -> None:
        self._records: deque[dict[str, Any]] = deque(maxlen=kept)
        self._completed: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._kept, self._written = kept, 0

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
        self._append(
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
        if len(self._completed) > self._kept:
            self._completed.popitem(last=False)

    def refused(self, transport: str, code: str, arrived_s: float, answered_s: float) -> None:
        self._append(
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

    def _append(self, record: dict[str, Any]) -> None:
        self._records.append(record)
        self._written += 1

    def since(self, offset: int) -> list[dict[str, Any]]:
        """The records from ``offset`` on (from the oldest kept if it was dropped)."""
        first = self._written - len(self._records)
        return list(itertools.islice(self._records, max(0, offset - first), None))

    def __len__(self) -> int:
        """Records ever written (the next offset)."""
        return self._written
