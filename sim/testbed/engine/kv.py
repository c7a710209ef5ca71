"""Conversations' KV state kept where their transport keeps their state.

The model holds one conversation's KV at a time (the live one).  When another
conversation needs the model, the live state is written back here, keyed by
the response it ends with, if that response can be continued (stored, or on a
WebSocket whose cache holds it); a continuation whose KV is here restores it
and prefills only its new input.  The store is a RAM cache with a byte budget
and least-recently-used eviction: an evicted conversation is prefilled again
in full, as is one whose request carried no state (the history resent).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

DEFAULT_BUDGET_BYTES = 512 * 1024 * 1024
"""RAM for written-back KV state (SmolLM2-135M keeps about 23 KB a token: some 20,000
tokens of conversations)."""


@dataclass(frozen=True)
class Snapshot:
    """One conversation's KV: the model's tokens in its context and llama.cpp's state bytes."""

    tokens: tuple[int, ...]
    data: bytes

    @property
    def size_bytes(self) -> int:
        return len(self.data)


class KvStore:
    """Response id -> snapshot, least recently used first out past ``budget_bytes``."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self.used_bytes = 0
        self.evictions = 0

    def __contains__(self, response_id: str) -> bool:
        return response_id in self._snapshots

    def __len__(self) -> int:
        return len(self._snapshots)

    def put(self, response_id: str, snapshot: Snapshot) -> None:
        """Keep ``snapshot``; a snapshot larger than the whole budget is not kept."""
        self.discard(response_id)
        if snapshot.size_bytes > self.budget_bytes:
            return
        self._snapshots[response_id] = snapshot
        self.used_bytes += snapshot.size_bytes
        while self.used_bytes > self.budget_bytes:
            _, oldest = self._snapshots.popitem(last=False)
            self.used_bytes -= oldest.size_bytes
            self.evictions += 1

    def take(self, response_id: str) -> Snapshot | None:
        """The snapshot (marked as just used), or None when it was never kept or evicted."""
        snapshot = self._snapshots.get(response_id)
        if snapshot is not None:
            self._snapshots.move_to_end(response_id)
        return snapshot

    def discard(self, response_id: str) -> None:
        snapshot = self._snapshots.pop(response_id, None)
        if snapshot is not None:
            self.used_bytes -= snapshot.size_bytes
