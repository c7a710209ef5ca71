"""Compaction of drawn histories (the DES), and the compaction request as a turn of its own.

A rollout's history grows by each turn's output and tool outputs.  Before turn
k the client holds the prompt it would send, F + C (fixed tokens and the
conversation); when that reaches ``compaction.threshold_tokens`` it first
sends a compaction request, which continues the history with the pending tool
outputs as new input and emits ``summary_tokens``, then sends turn k as a new
chain whose whole input is new: the task, the summary and turn k - 1's items.
So no request's prompt exceeds the threshold by more than one turn's growth,
and only the compaction request's can.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np

from models.compaction import Compaction
from sim.turn.turns import Turns

FIELDS = (
    "compacted",
    "compaction_prior_tokens",
    "compaction_new_tokens",
    "compaction_context_items",
    "compaction_items_new",
)
"""The per-turn fields of ``Turns`` that describe compaction."""


class SummaryLength(Protocol):
    """What a compaction request needs of the section: a ``Compaction``, or its column form
    (numbers as arrays over points)."""

    @property
    def summary_tokens(self) -> float | np.ndarray: ...


def without_compaction(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """The compaction fields of turns that are never compacted."""
    zeros = np.zeros(shape)
    return dict.fromkeys(FIELDS, zeros)


def compact(
    grown: dict[str, np.ndarray],
    output_tokens: np.ndarray,
    tool_output_tokens: np.ndarray,
    fixed_tokens: float,
    first_message_tokens: float,
    compaction: Compaction,
) -> dict[str, np.ndarray]:
    """``grown`` (``sim.turn.turns.history`` of drawn turns) after compaction, with the
    compaction fields; turn by turn over all rollouts at once."""
    offsets = grown["offsets"]
    lengths = np.diff(offsets)
    out = {name: grown[name].copy() for name in ("new_tokens", "prior_tokens", "items_new")}
    items = grown["context_items"].copy()
    fields = {name: np.zeros(offsets[-1]) for name in FIELDS}
    added_items = np.diff(grown["context_items"], append=0.0)
    context = out["new_tokens"][offsets[:-1]] + out["prior_tokens"][offsets[:-1]]
    held = items[offsets[:-1]]
    rollouts = np.arange(lengths.size)
    for k in range(1, int(lengths.max(initial=1))):
        going = lengths[rollouts] > k
        rollouts, context, held = rollouts[going], context[going], held[going]
        row = offsets[rollouts] + k
        previous = row - 1
        grown_by = output_tokens[previous] + tool_output_tokens[previous]
        before_items = held + added_items[previous]
        due = fixed_tokens + context + grown_by >= compaction.threshold_tokens
        kept = first_message_tokens + compaction.summary_tokens + grown_by
        kept_items = 2.0 + added_items[previous]
        fields["compacted"][row] = due
        fields["compaction_prior_tokens"][row] = due * (context + output_tokens[previous])
        fields["compaction_new_tokens"][row] = due * tool_output_tokens[previous]
        fields["compaction_context_items"][row] = due * before_items
        fields["compaction_items_new"][row] = due * out["items_new"][row]
        out["prior_tokens"][row] = np.where(due, 0.0, context + output_tokens[previous])
        out["new_tokens"][row] = np.where(due, kept, tool_output_tokens[previous])
        held = np.where(due, kept_items, before_items)
        out["items_new"][row] = np.where(due, held, out["items_new"][row])
        items[row] = held
        context = np.where(due, kept, context + grown_by)
    return {**grown, **out, "context_items": items, **fields}


def compaction_turns(turns: Turns, compaction: SummaryLength) -> Turns:
    """The compaction requests as turns: each continues the history and emits the summary."""
    zeros = np.zeros(turns.shape)
    return dataclasses.replace(
        turns,
        fixed_tokens=turns.fixed_tokens,  # the same instructions and tool definitions
        is_last=zeros,
        new_tokens=turns.compaction_new_tokens,
        prior_tokens=turns.compaction_prior_tokens,
        items_new=turns.compaction_items_new,
        context_items=turns.compaction_context_items,
        output_tokens=np.broadcast_to(compaction.summary_tokens, turns.shape),
        tool_s=zeros,
        failed_early=zeros,
        failed_late=zeros,
        retry_wait_s=zeros,
        **without_compaction(turns.shape),
    )
