"""Per-turn inputs of a block of rollouts: drawn (DES) or expected (analytic)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.in_place import add_to
from models.workload import rollout_turns


@dataclass(frozen=True)
class Turns:
    """Arrays over the turns of one or more rollouts, rollouts laid end to end.

    ``offsets[r]:offsets[r + 1]`` are the turns of rollout ``r``.  Token counts are
    floats (a continuous approximation); ``render_hit`` and ``is_last`` are 0/1
    when drawn and probabilities when expected.  The analytic engine adds a
    leading axis over points: per-turn arrays then broadcast to ``shape``
    (points, turns).
    """

    offsets: np.ndarray
    turn_index: np.ndarray
    is_last: np.ndarray
    fixed_tokens: float
    new_tokens: np.ndarray
    prior_tokens: np.ndarray
    items_new: np.ndarray
    context_items: np.ndarray
    output_tokens: np.ndarray
    decode_s_per_token: np.ndarray
    tool_s: np.ndarray
    render_hit: np.ndarray
    missing_history_tokens: np.ndarray
    """History tokens (prior context beyond the shared prefix) the chosen replica no longer
    holds, so they are prefilled again: 0 in the simple mode; recorded by the DES, expected
    by the analytic engine."""
    failed_early: np.ndarray
    """Failed attempts answered before inference (drawn counts, or expected)."""
    failed_late: np.ndarray
    """Failed attempts answered after prefill."""
    retry_wait_s: np.ndarray
    """The SDK's backoff waits between the attempts over HTTP (``models.retry_policy``; a
    WebSocket turn's work waits none)."""
    compacted: np.ndarray
    """1 where the client compacted the history before this turn, whose request then starts
    a new chain: its new input is the whole compacted context (``sim.turn.compaction``)."""
    compaction_prior_tokens: np.ndarray
    """The compaction request's inputs: the history it continues (0 where none is sent)."""
    compaction_new_tokens: np.ndarray
    compaction_context_items: np.ndarray
    compaction_items_new: np.ndarray
    tool_kind: np.ndarray | None = None
    """Index in ``workload.tools`` of the (first) tool each turn calls, -1 on the last turn
    (drawn turns only; the analytic engine has no kinds)."""

    @property
    def count(self) -> int:
        return int(self.turn_index.size)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of a per-turn array: (turns,), or (points, turns) in the analytic engine."""
        return self.new_tokens.shape

    @property
    def rollouts(self) -> int:
        return int(self.offsets.size - 1)

    def head(self, rollouts: int) -> Turns:
        """The first ``rollouts`` rollouts (draws do not depend on how many follow)."""
        end = int(self.offsets[rollouts])
        per_turn = {
            name: getattr(self, name)[:end]
            for name in self.__dataclass_fields__
            if name not in ("offsets", "fixed_tokens") and getattr(self, name) is not None
        }
        return Turns(
            **per_turn, offsets=self.offsets[: rollouts + 1], fixed_tokens=self.fixed_tokens
        )

    @property
    def context_tokens(self) -> np.ndarray:
        """Conversation tokens of the prompt (history plus new input), without the fixed part."""
        return self.prior_tokens + self.new_tokens

    @property
    def prompt_tokens(self) -> np.ndarray:
        """Every token of the prompt: the fixed part, the history and the new input."""
        return self.fixed_tokens + self.context_tokens

    def history_after(self) -> np.ndarray:
        """The session's history once each turn's output is written: the next turn's prior
        tokens (the same number, so a prefix kept whole is found whole), or, after a
        rollout's last turn, its context plus its output."""
        after = self.context_tokens + self.output_tokens
        going_on = self.is_last[:-1] == 0
        after[:-1] = np.where(going_on, self.prior_tokens[1:], after[:-1])
        return after


def history(
    calls: np.ndarray,
    output_tokens: np.ndarray,
    tool_output_tokens: np.ndarray,
    first_message_tokens: float,
    output_items_per_turn: int,
    parallel_calls: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Context growth of rollouts laid end to end; ``calls[r]`` tool-calling turns give
    calls+1 turns.

    Turns run along the last axis of the token arrays; leading axes (points)
    are carried through, with ``first_message_tokens`` and
    ``output_items_per_turn`` broadcasting against them.  ``parallel_calls``
    (per turn; None: one each) are the function calls of each turn: each adds a
    call item to the turn's output and an output item to the next turn's input.
    """
    turns_per_rollout = rollout_turns(calls.astype(np.int64))
    offsets = np.concatenate([[0], np.cumsum(turns_per_rollout)])
    starts = np.repeat(offsets[:-1], turns_per_rollout)
    turn_index = np.arange(offsets[-1]) - starts
    is_last = np.zeros(offsets[-1])
    is_last[offsets[1:] - 1] = 1.0
    added = output_tokens + tool_output_tokens
    # before = cumsum(added) - added; added_before_turn = before - before[starts], each
    # written over the running sum (the same numbers, fewer block-sized arrays)
    before = np.cumsum(added, axis=-1)
    np.subtract(before, added, out=before)
    added_before_turn = np.subtract(before, before[..., starts], out=before)
    new_tokens = np.where(turn_index == 0, first_message_tokens, _shift(tool_output_tokens))
    context = add_to(added_before_turn, first_message_tokens)
    if parallel_calls is None:
        items_new = np.ones(offsets[-1])
        context_items = 1.0 + turn_index * (output_items_per_turn + 1.0)
    else:
        items_new = np.where(turn_index == 0, 1.0, _shift(parallel_calls))
        added_items = output_items_per_turn - 1.0 + 2.0 * parallel_calls
        items_before = np.cumsum(added_items, axis=-1) - added_items
        context_items = 1.0 + items_before - items_before[..., starts]
    return {
        "offsets": offsets,
        "turn_index": turn_index.astype(float),
        "is_last": is_last,
        "new_tokens": new_tokens,
        "prior_tokens": context - new_tokens,
        "items_new": items_new,
        "context_items": context_items,
    }


def _shift(values: np.ndarray) -> np.ndarray:
    """values[t - 1] at t (the previous turn's value); 0 at t = 0."""
    out = np.zeros_like(values)
    out[..., 1:] = values[..., :-1]
    return out
