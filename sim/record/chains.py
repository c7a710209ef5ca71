"""Requests grouped into rollouts by their chains, and written as the per-request table.

A request continues the response it names in ``previous_response_id``; one that
names none but carries tool outputs (a client resending its whole history, or
one starting over after ``previous_response_not_found``) continues the response
that asked for those calls.  Anything else starts a rollout.  The tool calls of a
response run, as the API sees them, from its end to the start of the request
that carries their outputs: the idle gap in which the client ran its tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sim.record.exchange import Exchange
from sim.traces.table import Request, ToolCall


@dataclass
class Rollout:
    """One chain of requests."""

    rollout_id: str
    exchanges: list[Exchange] = field(default_factory=list)


class Chains:
    """Places each request in its rollout as it starts, and finds the calls it answers."""

    def __init__(self) -> None:
        self.rollouts: list[Rollout] = []
        self._of_response: dict[str, tuple[Rollout, Exchange]] = {}
        self._of_call: dict[str, tuple[Rollout, Exchange]] = {}
        self._rollout_of: dict[int, Rollout] = {}
        self._answered: dict[tuple[int, str], float] = {}
        """(id of the asking exchange, call id) -> start of the request that answered it."""

    def place(self, exchange: Exchange) -> Rollout:
        """Put a request (its body read) in the rollout of the response it continues."""
        parent = self._of_response.get(exchange.previous_response_id or "")
        for call_id in exchange.answered_calls:
            asked = self._of_call.get(call_id)
            if asked is None:
                continue
            parent = parent or asked
            key = (id(asked[1]), call_id)
            self._answered.setdefault(key, exchange.started_at_s)
        if parent is None:
            rollout = Rollout(f"rollout-{len(self.rollouts)}")
            self.rollouts.append(rollout)
        else:
            rollout = parent[0]
        rollout.exchanges.append(exchange)
        self._rollout_of[id(exchange)] = rollout
        return rollout

    def ended(self, exchange: Exchange) -> None:
        """Register a finished response: requests that continue it find its rollout."""
        rollout = self._rollout_of.get(id(exchange))
        if rollout is None:
            return
        if exchange.response_id is not None:
            self._of_response[exchange.response_id] = (rollout, exchange)
        for call_id, _ in exchange.calls:
            self._of_call[call_id] = (rollout, exchange)

    def tool_gaps_s(self, exchange: Exchange) -> list[float]:
        """For each call of ``exchange`` that was answered: its end to the answer's start."""
        return [
            self._answered[(id(exchange), call_id)] - exchange.ended_at_s
            for call_id, _ in exchange.calls
            if (id(exchange), call_id) in self._answered and exchange.ended_at_s is not None
        ]

    def requests(self, epoch_offset_s: float) -> list[list[Request]]:
        """Every rollout's finished requests as table rows (epoch seconds), in start order."""
        rows = []
        for rollout in self.rollouts:
            done = sorted(
                (e for e in rollout.exchanges if e.ended_at_s is not None),
                key=lambda e: e.started_at_s,
            )
            if not done:
                continue
            full = any(e.resends_history for e in done if e.transport == "http")
            rows.append(
                [self._row(rollout, index, e, epoch_offset_s, full) for index, e in enumerate(done)]
            )
        return rows

    def _row(
        self, rollout: Rollout, index: int, e: Exchange, offset_s: float, full: bool
    ) -> Request:
        ended_s = e.ended_at_s
        if ended_s is None:
            raise ValueError("a request still open has no row")
        usage = e.usage or {}
        details = usage.get("input_tokens_details") or {}
        out_details = usage.get("output_tokens_details") or {}
        calls = tuple(
            ToolCall(
                call_id,
                name,
                ended_s + offset_s,
                self._answered[(id(e), call_id)] + offset_s
                if (id(e), call_id) in self._answered
                else None,
            )
            for call_id, name in e.calls
        )
        return Request(
            rollout_id=rollout.rollout_id,
            request_index=index,
            start_s=e.started_at_s + offset_s,
            end_s=ended_s + offset_s,
            source="loopbudget record",
            format="record",
            transport="http-full" if e.transport == "http" and full else e.transport,
            first_output_s=None if e.first_output_at_s is None else e.first_output_at_s + offset_s,
            input_tokens=_count(usage.get("input_tokens")),
            cached_input_tokens=_count(details.get("cached_tokens")),
            output_tokens=_count(usage.get("output_tokens")),
            reasoning_tokens=_count(out_details.get("reasoning_tokens")),
            model=e.model,
            server_address=e.server_address,
            response_id=e.response_id,
            previous_response_id=e.previous_response_id,
            connection_id=e.connection_id,
            connection_reused=e.connection_reused,
            server_processing_ms=e.processing_ms,
            server_api_overhead_ms=e.timing.get("api_overhead_ms"),
            server_engine_ms=e.timing.get("engine_ms"),
            server_engine_ttft_ms=e.timing.get("engine_ttft_ms"),
            error_type=e.error_type,
            tool_calls=calls,
        )


def _count(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
