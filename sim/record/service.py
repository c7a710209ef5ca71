"""Running the recorder: serve until stopped, then write the trace and say what it cost.

The proxy listens on 127.0.0.1 (its listener sets ``TCP_NODELAY``: small events
must not wait for the client's delayed acknowledgement), on uvloop's event loop
with httptools parsing HTTP (both compiled: a proxy's cost is the CPU it spends on
each request and chunk it passes on, and it sets no timers); it does not compress
WebSocket frames to its clients (a hop on one machine gains nothing from it), while its upstream
WebSocket negotiates compression as any client would.  On SIGINT or SIGTERM it
stops taking requests, lets those in flight finish, writes every rollout it
recorded to the OTLP JSON file (one rollout a line) and, with ``--keep-content``,
the request and response bodies beside it; then it reports its own added latency.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import uvicorn
import uvloop

from sim.record.arrival import ArrivalStampedProtocol
from sim.record.proxy import Recorder
from sim.report.otel import OtlpWriter

HOST = "127.0.0.1"
KEEPALIVE_S = 120
"""How long the proxy keeps an idle client connection: longer than clients keep theirs
(the SDK's 5 s), so the client's pool decides, as it would against the service."""


@dataclass(frozen=True)
class Recording:
    """What a recording session wrote and measured."""

    requests: int
    rollouts: int
    added_p50_ms: float
    added_p99_ms: float

    def line(self) -> str:
        return (
            f"recorded {self.requests} requests in {self.rollouts} rollouts; the proxy added "
            f"{self.added_p50_ms:.2f} ms p50, {self.added_p99_ms:.2f} ms p99 a request"
        )


class _Server(uvicorn.Server):
    """Stops on SIGINT or SIGTERM and returns, so the trace is written; uvicorn's own
    handling raises the signal again once it has stopped."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self._stop) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop(self, sig: int, frame: object) -> None:
        self.should_exit = True


def run(
    upstream: str, out: Path, port: int, keep_content: bool, on_ready: Callable[[str], None]
) -> Recording:
    """Serve the proxy until stopped on an event loop of its own (uvloop's)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(record(upstream, out, port, keep_content, on_ready))


def content_path(out: Path) -> Path:
    """Where ``--keep-content`` writes the bodies: beside the trace."""
    return out.with_name(out.name + ".content.jsonl")


async def record(
    upstream: str,
    out: Path,
    port: int,
    keep_content: bool,
    on_ready: Callable[[str], None],
) -> Recording:
    """Serve the proxy in front of ``upstream`` until stopped; write ``out``."""
    content: IO[str] | None = content_path(out).open("w") if keep_content else None

    def keep(kind: str, body: Any) -> None:
        if content is not None:
            content.write(json.dumps({"kind": kind, "body": body}) + "\n")

    recorder = Recorder(upstream, keep if content is not None else None)
    epoch_offset_s = time.time() - time.monotonic()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listener.bind((HOST, port))
    listener.listen(2048)
    config = uvicorn.Config(
        recorder,
        http=ArrivalStampedProtocol,
        ws="websockets-sansio",
        ws_max_size=1 << 30,
        ws_ping_interval=None,
        ws_per_message_deflate=False,
        timeout_keep_alive=KEEPALIVE_S,
        log_level="warning",
        lifespan="off",
    )
    server = _Server(config)
    on_ready(f"http://{HOST}:{listener.getsockname()[1]}{recorder.base_path}")
    try:
        await server.serve(sockets=[listener])
    finally:
        await recorder.close()
        if content is not None:
            content.close()
    rollouts = recorder.chains.requests(epoch_offset_s)
    with OtlpWriter(out, agent_name="recorded", service_name="loopbudget-record") as writer:
        for requests in rollouts:
            writer.write(requests)
    added_ms = sorted(s * 1e3 for s in recorder.added_s) or [0.0]
    return Recording(
        requests=sum(len(r) for r in rollouts),
        rollouts=len(rollouts),
        added_p50_ms=statistics.median(added_ms),
        added_p99_ms=added_ms[int(0.99 * (len(added_ms) - 1))],
    )
