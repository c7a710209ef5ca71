"""Running the emulator: in the foreground (``loopbudget testbed serve``) or as a child process.

The driver runs the emulator in its own process, so the SDK's work and the
server's never share one event loop (or one core when two are free).  The
child binds 127.0.0.1 on a free port, prints it, and exits when told to or
when its parent goes away (its standard input closes).
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import IO

import uvicorn

from models.loading import validate
from models.scenario import Scenario
from sim.testbed import clock
from sim.testbed.app import Service
from sim.testbed.clock import TimerLead
from sim.testbed.emulator import Emulator
from sim.testbed.link import DelayLink

HOST = "127.0.0.1"
DEFAULT_API_KEY = "loopbudget-testbed"
MAX_FRAME_BYTES = 16 * 1024 * 1024
"""Largest frame the service reads; bigger ones get an error event (up to 4x, then a close)."""
_READY = "READY"
_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ServerSettings:
    """What a running emulator needs besides its (time-scaled) scenario."""

    api_key: str = DEFAULT_API_KEY
    port: int = 0
    max_frame_bytes: int = MAX_FRAME_BYTES
    host: str = HOST
    link_rtt_s: float = 0.0
    """Round trip of an emulated link in front of the service (``link``); 0: none."""


def keepalive_timeout_s(scenario: Scenario) -> float:
    """The server keeps idle HTTP connections twice as long as the client's pool does, so
    the client's idle timeout is the one that decides (as with the SDK and common servers)."""
    return 2.0 * scenario.client.keepalive_idle_s


async def serve(
    scenario: Scenario, settings: ServerSettings, on_ready: Callable[[int], None]
) -> None:
    """Serve until SIGINT/SIGTERM; ``on_ready`` gets the bound port."""
    lead = await TimerLead.measure()
    service = Service(Emulator(scenario, lead), settings.api_key, settings.max_frame_bytes)
    config = uvicorn.Config(
        service.app(),
        http="h11",
        ws="websockets-sansio",
        ws_max_size=4 * settings.max_frame_bytes,
        ws_ping_interval=None,
        # uvicorn annotates an int but hands it to loop.call_later, which takes the fractional
        # seconds a time-scaled keep-alive needs.
        timeout_keep_alive=keepalive_timeout_s(scenario),  # type: ignore[arg-type]
        log_level="warning",
        lifespan="off",
    )
    # IPPROTO_TCP named explicitly: asyncio disables Nagle only on sockets that say so, and
    # accepted sockets inherit TCP_NODELAY from the listener on Linux.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    linked = settings.link_rtt_s > 0
    listener.bind((HOST, 0) if linked else (settings.host, settings.port))
    # Listening before saying ready: a client may connect while uvicorn still starts up.
    listener.listen(2048)
    server = uvicorn.Server(config)
    port = listener.getsockname()[1]
    if linked:
        link = DelayLink(port, settings.link_rtt_s, TimerLead(lead.lead_s))
        port = await link.start(settings.host, settings.port)
    on_ready(port)
    await server.serve(sockets=[listener])


def _child_main() -> None:
    """The child process: read the settings from stdin, serve, stop when stdin closes."""
    request = json.loads(sys.stdin.readline())
    scenario = validate(request["scenario"])
    settings = ServerSettings(**request["settings"])

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def ready(port: int) -> None:
            print(f"{_READY} {port}", flush=True)
            loop.add_reader(sys.stdin.fileno(), _stop_on_eof)

        await serve(scenario, settings, ready)

    clock.run(main)


def _stop_on_eof() -> None:
    if not os.read(sys.stdin.fileno(), 4096):
        os.kill(os.getpid(), signal.SIGTERM)


@contextmanager
def emulator_process(
    scenario: Scenario, settings: ServerSettings, prefix: tuple[str, ...] = ()
) -> Iterator[str]:
    """Start the emulator in a child process (run through ``prefix``, e.g. inside a network
    namespace); yields its base URL; stops it on exit."""
    child = subprocess.Popen(
        [*prefix, sys.executable, "-m", "sim.testbed.server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    stdin, stdout = _pipes(child)
    try:
        request = {
            "scenario": scenario.model_dump(mode="json", by_alias=True),
            "settings": asdict(settings),
        }
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        yield f"http://{settings.host}:{_wait_ready(child, stdout)}/v1"
    finally:
        stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        stdout.close()


def _pipes(child: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """The child's stdin and stdout, both opened as pipes."""
    if child.stdin is None or child.stdout is None:
        raise ValueError("the emulator's stdin and stdout must be pipes")
    return child.stdin, child.stdout


def _wait_ready(child: subprocess.Popen[str], stdout: IO[str]) -> int:
    deadline_s = time.monotonic() + _START_TIMEOUT_S
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline_s:
            if not selector.select(timeout=deadline_s - time.monotonic()):
                break
            line = stdout.readline()
            if not line:
                break
            if line.startswith(_READY):
                return int(line.split()[1])
    raise RuntimeError(f"the emulator did not start (exit code {child.poll()})")


if __name__ == "__main__":
    _child_main()
