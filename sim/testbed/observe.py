"""The server's side of each turn, read from the emulator, and each turn split in its parts.

With the client's timestamps and the server's log on one clock, a turn splits
into: ``up_s`` (from the agent starting the request to the server taking it:
building, connecting, uploading), the server's span, ``gap_s`` (the first output
event leaving the server until the SDK yields it) and ``down_s`` (the last
event leaving the server until the SDK yields it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx2

from sim.testbed.records import RolloutRecord, TurnRecord


class ServerView:
    """Reads ``/v1/testbed/*`` of a running emulator."""

    def __init__(self, base_url: str, api_key: str) -> None:
        self._base_url = base_url.rstrip("/")
        self._headers = {"authorization": f"Bearer {api_key}"}
        self._offset = 0
        self.records: dict[str, dict[str, Any]] = {}
        self.refused: list[dict[str, Any]] = []

    async def _get(self, path: str, **params: Any) -> dict[str, Any]:
        async with httpx2.AsyncClient(timeout=30.0) as client:
            response = await client.get(
                f"{self._base_url}/testbed/{path}", params=params, headers=self._headers
            )
            response.raise_for_status()
            return response.json()

    async def refresh(self) -> None:
        """Read the log records written since the last read."""
        page = await self._get("log", since=self._offset)
        self._offset = page["next"]
        for record in page["records"]:
            if record["status"] == "completed":
                self.records[record["response_id"]] = record
            else:
                self.refused.append(record)

    async def stats(self) -> dict[str, Any]:
        return await self._get("stats")

    async def utilization(self, start_s: float, end_s: float) -> dict[str, float]:
        return (await self._get("pools", start=start_s, end=end_s))["utilization"]


@dataclass(frozen=True)
class TurnSplit:
    """One turn in parts (seconds) and what it carried."""

    turn: TurnRecord
    server: dict[str, Any]
    up_s: float
    server_s: float
    emulated_s: float
    """What the server's stages and pool waits add up to (its span, without timer error)."""
    gap_s: float
    down_s: float

    @property
    def output_tokens(self) -> float:
        return float(self.server["output_tokens"])


def split_turns(rollouts: list[RolloutRecord], view: ServerView) -> list[TurnSplit]:
    """Every turn joined with the server's record of its (last) request."""
    splits = []
    for rollout in rollouts:
        for turn in rollout.turns:
            if turn.response_id is None:
                raise ValueError(f"rollout {rollout.rollout} turn {turn.turn}: no response id")
            server = view.records[turn.response_id]
            stages_s = sum(server["stage_s"].values()) + sum(server["wait_s"].values())
            splits.append(
                TurnSplit(
                    turn=turn,
                    server=server,
                    up_s=server["arrived_at_s"] - turn.started_at_s - turn.recover_s,
                    server_s=server["completed_at_s"] - server["arrived_at_s"],
                    emulated_s=stages_s,
                    gap_s=turn.first_output_at_s - server["first_output_at_s"],
                    down_s=turn.completed_at_s - server["completed_at_s"],
                )
            )
    return splits
