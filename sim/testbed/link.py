"""An emulated network link: a TCP relay that delays every chunk by half the round trip.

Where the machine cannot give the testbed a real delayed link (``netem``), the
emulator's process listens through this relay: every chunk of bytes, in either
direction, is passed on half the round trip after it arrived, in order, and the
first bytes a new connection sends wait one round trip more (the TCP handshake
that a real link makes the client wait for before it can send).  HTTP requests,
server-sent events, WebSocket frames and pings all cross it, so what a client
measures over it, a ping included, is the link's round trip plus the ends' own
handling.  Bandwidth is not emulated here (``netem`` emulates it).  The relay's
sleeps aim early by how late its own recent sleeps ended (a ``clock.TimerLead`` of
its own), so on average a chunk is passed on at its deadline, also when the
machine's load makes timers late; a single chunk may leave a little early or late,
as a real link has jitter.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

from sim.testbed.clock import TimerLead

_READ_BYTES = 1 << 16
_END = b""


class DelayLink:
    """Listens on ``host`` and relays each connection to ``target_port`` on loopback."""

    def __init__(self, target_port: int, rtt_s: float, lead: TimerLead) -> None:
        self.target_port, self.rtt_s, self.lead = target_port, rtt_s, lead
        self._server: asyncio.Server | None = None
        self._relays: set[asyncio.Task[Any]] = set()

    async def start(self, host: str, port: int = 0) -> int:
        """Start listening; the bound port."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listener.bind((host, port))
        self._server = await asyncio.start_server(self._accepted, sock=listener, backlog=2048)
        return listener.getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in self._relays:
            task.cancel()
        await asyncio.gather(*self._relays, return_exceptions=True)

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a relay runs as a task of the server")
        self._relays.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            self._relays.discard(task)
            return
        for end in (writer, up_writer):
            end.transport.get_extra_info("socket").setsockopt(
                socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
            )
        one_way_s = self.rtt_s / 2
        try:
            await asyncio.gather(
                self._direction(reader, up_writer, one_way_s, handshake_s=self.rtt_s),
                self._direction(up_reader, writer, one_way_s, handshake_s=0.0),
            )
        finally:
            for end in (writer, up_writer):
                end.close()
            self._relays.discard(task)

    async def _direction(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        one_way_s: float,
        handshake_s: float,
    ) -> None:
        """Pass one direction's chunks on, each ``one_way_s`` after it arrived (the first
        ``handshake_s`` later still)."""
        chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due_s, data = await chunks.get()
                await self.lead.sleep_until(due_s)
                if data is _END:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        delivery = asyncio.create_task(deliver())
        extra_s = handshake_s
        try:
            while data := await reader.read(_READ_BYTES):
                chunks.put_nowait((time.monotonic() + one_way_s + extra_s, data))
                extra_s = 0.0
            chunks.put_nowait((time.monotonic() + one_way_s, _END))
            await delivery
        except (ConnectionError, OSError):
            delivery.cancel()
        finally:
            if not delivery.done():
                delivery.cancel()
