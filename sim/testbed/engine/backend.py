"""The real backend as the emulator sees it: the API's real work and real inference.

For each generating request the validation and rendering stages are the real
work of ``validate`` and ``render`` on what the request makes the server process, timed; prefill and
decode run on the model in one worker thread (llama.cpp releases the GIL, so
the event loop keeps streaming), one request at a time; the output streams as
tokens are decoded.  The text on the wire is the scripted text of the turn's
drawn length (so the conversation the client keeps is the one the simulation
counts); the KV holds the model's own tokens, as a real server's cache does.
The client calibration's requests (which measure the client, not the server)
skip the model: their output is streamed at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sim.testbed.calibrate import CALIBRATION_REPLICATION
from sim.testbed.engine.kv import DEFAULT_BUDGET_BYTES, KvStore
from sim.testbed.engine.model import DEFAULT_THREADS, open_model
from sim.testbed.engine.render import continuation, count_tokens, full_prompt, o200k
from sim.testbed.engine.runner import Prefilled, Runner
from sim.testbed.engine.validate import validate_items, warm_up
from sim.testbed.intake import Prepared
from sim.testbed.protocol import Item
from sim.testbed.stream import OutputStream
from sim.testbed.work import Source

DELTAS = 8
"""Output deltas of one response at most, as the emulated model sends."""
_WARM_UP_TOKENS = 64


@dataclass(frozen=True)
class ApiWork:
    """The API's real work on one request: seconds of each stage and what it produced."""

    validate_s: float
    render_s: float
    o200k_tokens: int
    rendered: str
    whole: bool
    """``rendered`` is the whole prompt (else the continuation of a cached conversation)."""


@dataclass(frozen=True)
class Inferred:
    prefilled: Prefilled
    decode_s: float
    first_output_at_s: float


def _new_items(p: Prepared) -> tuple[Item, ...]:
    count = p.processed.items_new
    return p.context[len(p.context) - count :] if count else ()


class RealBackend:
    """SmolLM2 on llama.cpp behind the emulator's validation, rendering, prefill and decode."""

    def __init__(
        self, threads: int = DEFAULT_THREADS, budget_bytes: int = DEFAULT_BUDGET_BYTES
    ) -> None:
        self.runner = Runner(open_model(threads), KvStore(budget_bytes))
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="llama")
        self._model: asyncio.Lock | None = None
        warm_up()
        o200k()
        self.runner.prefill(None, lambda: "lorem ipsum " * _WARM_UP_TOKENS, "")
        self.runner.clear()

    def serves(self, p: Prepared) -> bool:
        """Whether ``p`` runs on this backend (a warm-up that generates nothing does not)."""
        return p.generate

    def api_work(self, p: Prepared) -> ApiWork:
        """Validate and render what the request makes the server process: the new items on a
        cache hit, else the whole conversation."""
        cached = p.processed.source is Source.CACHE
        items = _new_items(p) if cached else p.context
        started_s = time.perf_counter()
        validate_items(items)
        validated_s = time.perf_counter()
        if cached:
            rendered = continuation(items)
        else:
            rendered = full_prompt(p.head.instructions or "", p.head.tools, items)
        tokens = count_tokens(rendered)
        done_s = time.perf_counter()
        return ApiWork(validated_s - started_s, done_s - validated_s, tokens, rendered, not cached)

    async def infer(
        self,
        p: Prepared,
        api: ApiWork,
        output: OutputStream,
        join: Callable[[], Awaitable[None]],
    ) -> Inferred:
        """Prefill, ``join`` (the parallel classifiers' verdict), the first output event, then
        the output streamed as the model decodes it."""
        if self._model is None:
            self._model = asyncio.Lock()
        loop = asyncio.get_running_loop()
        parent = p.head.previous_response_id if p.processed.source is not Source.NONE else None
        head = p.head

        def whole() -> str:
            if api.whole:
                return api.rendered
            return full_prompt(head.instructions or "", head.tools, p.context)

        suffix = api.rendered if not api.whole else continuation(_new_items(p))
        if p.replication == CALIBRATION_REPLICATION:
            await join()
            first_output_at_s = time.monotonic()
            await output.start_output()
            await output.advance(1.0)
            return Inferred(Prefilled(0, 0, 0, 0.0, 0.0), 0.0, first_output_at_s)
        async with self._model:
            prefilled = await loop.run_in_executor(
                self._worker, self.runner.prefill, parent, whole, suffix
            )
            await join()
            first_output_at_s = time.monotonic()
            await output.start_output()
            decode_s = await self._decode(loop, max(1, round(p.processed.output_tokens)), output)
            self.runner.finish(head.response_id, kept=head.store or not p.processed.http)
        return Inferred(prefilled, decode_s, first_output_at_s)

    async def _decode(
        self, loop: asyncio.AbstractEventLoop, tokens: int, output: OutputStream
    ) -> float:
        ticks: asyncio.Queue[int] = asyncio.Queue()
        sent = [0]

        def on_token(k: int) -> None:
            tick = k * DELTAS // tokens
            if tick > sent[0]:
                sent[0] = tick
                loop.call_soon_threadsafe(ticks.put_nowait, k)

        decoding = loop.run_in_executor(self._worker, self.runner.decode, tokens, on_token)

        # A failed decode ends the stream's wait; awaiting it below raises its error.
        def unblock(done: asyncio.Future[float]) -> None:
            if not done.cancelled() and done.exception() is not None:
                ticks.put_nowait(tokens)

        decoding.add_done_callback(unblock)
        streamed = 0
        while streamed < tokens:
            streamed = await ticks.get()
            await output.advance(streamed / tokens)
        return await decoding

    def close(self) -> None:
        self._worker.shutdown(wait=True)
        self.runner.close()
