"""Prefill and decode on the model, one request at a time, its KV following the conversation.

The model's context holds one conversation's KV (the live one).  A request that
continues the live conversation prefills only its continuation; one whose KV
was written back to the ``KvStore`` restores it first (the live one is written
back in its place when it can be continued); anything else (no state: a new
chain, the history resent, a conversation evicted) starts from an empty
context and prefills the whole prompt.  Decoding is greedy and runs for the
number of tokens the turn's plan asks for.  Every method blocks: the backend
calls them from its one worker thread.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable
from dataclasses import dataclass

import llama_cpp
from llama_cpp import Llama

from sim.testbed.engine.kv import KvStore, Snapshot

_SEQUENCE = 0


@dataclass(frozen=True)
class Prefilled:
    """What one prefill did."""

    evaluated_tokens: int
    """Model tokens evaluated (the uncached part of the prompt)."""
    context_tokens: int
    """Model tokens in the context after it (the whole prompt)."""
    restored_tokens: int
    """Tokens of KV restored from the store first (0: live, or nothing to restore)."""
    restore_s: float
    seconds: float
    """The whole prefill: restore, the model's tokenisation and the evaluation."""


class Runner:
    """The model, its live conversation and the store its other conversations wait in."""

    def __init__(self, llm: Llama, store: KvStore) -> None:
        self.llm, self.store = llm, store
        self.live_id: str | None = None
        self._live_kept = False
        self._sampler = llama_cpp.llama_sampler_init_greedy()

    def close(self) -> None:
        llama_cpp.llama_sampler_free(self._sampler)

    def tokenize(self, text: str) -> list[int]:
        return self.llm.tokenize(text.encode(), add_bos=False, special=True)

    def prefill(self, parent_id: str | None, whole: Callable[[], str], suffix: str) -> Prefilled:
        """Make the context hold this request's prompt: the live conversation or a restored
        one continued with ``suffix``, or an empty context filled with ``whole()``."""
        started_s = time.perf_counter()
        restored, restore_s = 0, 0.0
        if parent_id is not None and parent_id == self.live_id:
            text = suffix
        elif parent_id is not None and (snapshot := self.store.take(parent_id)) is not None:
            self._write_back()
            restore_s = self.restore(snapshot)
            restored, text = len(snapshot.tokens), suffix
        else:
            self._write_back()
            self.clear()
            text = whole()
        self.live_id = None
        tokens = self.tokenize(text)
        self.llm.eval(tokens)
        return Prefilled(
            len(tokens), self.llm.n_tokens, restored, restore_s, time.perf_counter() - started_s
        )

    def decode(self, tokens: int, on_token: Callable[[int], None]) -> float:
        """Generate ``tokens`` tokens greedily (each evaluated, so the KV holds all of them);
        ``on_token(k)`` after the k-th.  Returns the seconds it took."""
        started_s = time.perf_counter()
        ctx = self.llm.ctx
        for k in range(1, tokens + 1):
            token = llama_cpp.llama_sampler_sample(self._sampler, ctx, -1)
            self.llm.eval([token])
            on_token(k)
        return time.perf_counter() - started_s

    def finish(self, response_id: str, kept: bool) -> None:
        """The context now holds ``response_id``'s conversation; ``kept``: it can be continued
        (stored, or cached on its connection), so it is written back when replaced."""
        self.live_id, self._live_kept = response_id, kept

    def clear(self) -> None:
        self.llm.reset()
        self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)

    def snapshot(self) -> Snapshot:
        """The live context's KV and tokens."""
        ctx = self.llm.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, _SEQUENCE)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, _SEQUENCE)
        tokens = tuple(int(t) for t in self.llm.input_ids[: self.llm.n_tokens])
        return Snapshot(tokens, bytes(buffer[:written]))

    def restore(self, snapshot: Snapshot) -> float:
        """Load ``snapshot`` into the context; returns the seconds it took."""
        started_s = time.perf_counter()
        self.clear()
        buffer = (ctypes.c_uint8 * snapshot.size_bytes).from_buffer_copy(snapshot.data)
        loaded = llama_cpp.llama_state_seq_set_data(
            self.llm.ctx, buffer, snapshot.size_bytes, _SEQUENCE
        )
        if loaded != snapshot.size_bytes:
            raise RuntimeError("llama.cpp refused a KV snapshot")
        count = len(snapshot.tokens)
        self.llm.input_ids[:count] = snapshot.tokens
        self.llm.n_tokens = count
        return time.perf_counter() - started_s

    def _write_back(self) -> None:
        if self.live_id is not None and self._live_kept:
            self.store.put(self.live_id, self.snapshot())
        self.live_id = None
