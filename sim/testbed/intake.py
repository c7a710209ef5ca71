"""A ``response.create`` body checked and resolved into what the server will process.

The intake validates the request as an API would (types of items, tool outputs
that answer a call in the conversation), resolves ``previous_response_id`` from
the connection's cache or the persistent store (``previous_response_not_found``
when neither has it), splits the conversation into what the server already
knew and what is new, counts items and tokens, and finds the rollout and turn
the scripted model is at.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from models.scenario import Scenario
from sim.testbed.protocol import (
    ApiError,
    Item,
    ResponseHead,
    normalized_input,
    shown,
    text_of,
    tokens_in,
    tools_text,
)
from sim.testbed.request_check import check_create, rollout_numbers
from sim.testbed.script import Script, TurnPlan
from sim.testbed.state import ConnectionCache, ResponseState, ResponseStore
from sim.testbed.work import Processed, Source

REMEMBERED_TASKS = 100_000
"""User tasks whose rollout number is kept for clients that name none (the oldest forgotten)."""
_ITEM_TYPES = {"message", "function_call", "function_call_output", "reasoning"}
_MODEL_OUTPUT_TYPES = {"function_call", "reasoning"}


@dataclass(frozen=True)
class Prepared:
    """A request ready to run: its response head, counts, conversation and plan."""

    head: ResponseHead
    processed: Processed
    context: tuple[Item, ...]
    context_tokens: float
    fixed_key: str
    rollout: int
    replication: int
    turn: int
    plan: TurnPlan
    generate: bool


class Intake:
    """Prepares requests against the store (and a connection's cache)."""

    def __init__(self, scenario: Scenario, store: ResponseStore, script: Script) -> None:
        self._bytes_per_token = scenario.network.bytes_per_token
        self._store, self._script = store, script
        self._next_rollout = 0
        self._rollout_of_task: OrderedDict[str, int] = OrderedDict()

    def _tokens(self, items: list[Item] | tuple[Item, ...]) -> float:
        return sum(tokens_in(text_of(item), self._bytes_per_token) for item in items)

    def prepare(self, body: dict[str, Any], http: bool, cache: ConnectionCache | None) -> Prepared:
        """Check and resolve ``body``; raises ``ApiError`` for what the API refuses."""
        check_create(body)
        tools = body.get("tools") or []
        instructions = body.get("instructions") or ""
        new = normalized_input(body.get("input"))
        state, source = self._resolve(body.get("previous_response_id"), cache)
        if state is not None:
            prior: tuple[Item, ...] = state.context
            prior_tokens = state.context_tokens
        else:
            split = _after_last_output(new)
            prior, new = tuple(new[:split]), new[split:]
            prior_tokens = self._tokens(prior)
        context = (*prior, *new)
        _check_items(context, len(prior))
        fixed_text = instructions + tools_text(tools)
        fixed_key = hashlib.blake2b(fixed_text.encode(), digest_size=16).hexdigest()
        turn = sum(1 for item in context if item.get("type") == "function_call_output")
        rollout, replication = self._rollout(body.get("metadata") or {}, state, context)
        plan = self._script.turn(rollout, turn, replication)
        generate = body.get("generate", True) is not False
        new_tokens = self._tokens(new)
        store = body.get("store", True) is not False
        processed = Processed(
            http=http,
            source=source,
            items_new=len(new),
            items_in_context=len(context),
            fixed_tokens=tokens_in(fixed_text, self._bytes_per_token),
            new_tokens=new_tokens,
            prior_tokens=prior_tokens,
            fixed_changed=state is not None and state.fixed_key != fixed_key,
            render_hit=plan.render_hit,
            output_tokens=plan.output_tokens if generate else 0.0,
            decode_s_per_token=plan.decode_s_per_token,
        )
        return Prepared(
            head=ResponseHead.of(body, store),
            processed=processed,
            context=context,
            context_tokens=prior_tokens + new_tokens,
            fixed_key=fixed_key,
            rollout=rollout,
            replication=replication,
            turn=turn,
            plan=plan,
            generate=generate,
        )

    def _resolve(
        self, previous_id: Any, cache: ConnectionCache | None
    ) -> tuple[ResponseState | None, Source]:
        if previous_id is None:
            return None, Source.NONE
        if not isinstance(previous_id, str):
            raise ApiError(400, "invalid_type", "previous_response_id must be a string")
        cached = cache.get(previous_id) if cache is not None else None
        if cached is not None:
            return cached, Source.CACHE
        stored = self._store.get(previous_id)
        if stored is not None:
            return stored, Source.STORE
        raise ApiError(
            400,
            "previous_response_not_found",
            f"Previous response with id '{shown(previous_id)}' not found.",
            "previous_response_id",
        )

    def _rollout(
        self, metadata: dict[str, Any], state: ResponseState | None, context: tuple[Item, ...]
    ) -> tuple[int, int]:
        """The client's rollout (metadata), else the chain's, else one per user task."""
        named = rollout_numbers(metadata)
        if named is not None:
            return named
        if state is not None:
            return state.rollout, state.replication
        task = hashlib.blake2b(text_of(context[0]).encode() if context else b"").hexdigest()
        if task not in self._rollout_of_task:
            self._rollout_of_task[task] = self._next_rollout
            self._next_rollout += 1
            if len(self._rollout_of_task) > REMEMBERED_TASKS:
                self._rollout_of_task.popitem(last=False)
        self._rollout_of_task.move_to_end(task)
        return self._rollout_of_task[task], 0


def _after_last_output(items: list[Item]) -> int:
    """Index after the last item the model produced: what follows is this turn's new input."""
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item.get("type") in _MODEL_OUTPUT_TYPES or item.get("role") == "assistant":
            return index + 1
    return 0


def _check_items(context: tuple[Item, ...], first_new: int) -> None:
    """Every new item is of a known type; every tool output answers a call before it."""
    calls: set[str] = set()
    for index, item in enumerate(context):
        kind = item.get("type", "message" if "role" in item else None)
        if index >= first_new and kind not in _ITEM_TYPES:
            raise ApiError(
                400, "invalid_value", f"Invalid input item type {shown(kind)!r}.", f"input[{index}]"
            )
        if kind == "function_call":
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output" and str(item.get("call_id")) not in calls:
            raise ApiError(
                400,
                "invalid_value",
                f"No tool call found for function call output with call_id "
                f"{json.dumps(shown(str(item.get('call_id'))))}.",
                f"input[{index}]",
            )
