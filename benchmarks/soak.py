"""The emulator under a soak: ``python -m benchmarks.soak [--quick] [--output PATH]``.

The server of ``loopbudget testbed serve`` (time-scaled codex-spark, in a child
process on 127.0.0.1) holds ``IDLE`` TCP connections that never send a byte and
``AGENTS`` WebSocket agents for ``DURATION_S``.  Each agent runs rollouts as the
SDK would: a ``response.create`` with the task, then one continuation a turn
answering the model's tool call (``previous_response_id``, the connection's
cache) after a tool step of ``TOOL_S``, until the model answers in text; a
dropped connection is reopened.  Before the soak the benchmark raises its own
limit on open files (the server raises its own).

Reported: whether the server stayed up and answered (responses completed, error
events, a plain HTTP request at the end), the most sockets it held, the time of a
response (p50, p99), and its resident memory sampled every half second: before
any connection (the baseline), its peak, and the peak as a ratio of the baseline,
against ``MEMORY_BOUND_MB``; read from ``/proc`` (the testbed runs on Linux).  Results go
to ``benchmarks/results-soak.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import websockets

from models.loading import load_scenario
from sim.testbed import clock
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time

OUTPUT = Path(__file__).resolve().parent / "results-soak.json"
IDLE, AGENTS, DURATION_S = 5_000, 500, 60.0
QUICK_IDLE, QUICK_AGENTS, QUICK_DURATION_S = 200, 20, 5.0
TIME_SCALE = 0.05
"""Wall seconds per scenario second: a response takes a few tens of milliseconds."""
TOOL_S = 2.0
"""Wall seconds of an agent's tool step between two requests (about 200 requests a second
from 500 agents, what one emulator process serves beside its driver on two cores)."""
MEMORY_BOUND_MB = 512
"""The stated bound on the server's resident memory during the soak (measured peak: about
260 MB, from 72 MB before any connection)."""
SAMPLE_S = 0.5
AUTH = {"authorization": f"Bearer {DEFAULT_API_KEY}"}


@dataclass
class Tally:
    """What the agents saw."""

    completed: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0
    response_s: list[float] = field(default_factory=list)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    options = parser.parse_args(argv)
    sizes = (
        (QUICK_IDLE, QUICK_AGENTS, QUICK_DURATION_S)
        if options.quick
        else (IDLE, AGENTS, DURATION_S)
    )
    results = soak(*sizes)
    options.output.write_text(json.dumps(results, indent=2) + "\n")
    print(_summary(results))
    return results


def soak(idle: int, agents: int, duration_s: float) -> dict[str, Any]:
    """Hold ``idle`` idle connections and ``agents`` WebSocket agents for ``duration_s``."""
    _raise_open_files(idle + 2 * agents + 256)
    scenario = scale_time(load_scenario("codex-spark"), TIME_SCALE)
    with emulator_process(scenario, ServerSettings()) as base_url:
        server = _server_pid()
        baseline_mb = _rss_mb(server)
        with _sampled(server) as peaks, _idle(base_url, idle):
            tally = clock.run(lambda: _agents(base_url, agents, duration_s))
            answered = _answers(base_url)
            alive = Path(f"/proc/{server}").exists()
    response_ms = sorted(s * 1e3 for s in tally.response_s) or [float("nan")]
    return {
        "idle_connections": idle,
        "agents": agents,
        "duration_s": duration_s,
        "time_scale": TIME_SCALE,
        "tool_s": TOOL_S,
        "stayed_up": alive,
        "answered_afterwards": answered,
        "server_sockets_peak": peaks["sockets"],
        "responses_completed": tally.completed,
        "responses_per_s": tally.completed / duration_s,
        "error_events": tally.errors,
        "reconnects": tally.reconnects,
        "response_ms": {
            "p50": statistics.median(response_ms),
            "p99": response_ms[int(0.99 * (len(response_ms) - 1))],
        },
        "server_rss_mb": {"baseline": baseline_mb, "peak": peaks["rss_mb"]},
        "peak_over_baseline": peaks["rss_mb"] / baseline_mb,
        "memory_bound_mb": MEMORY_BOUND_MB,
        "within_bound": peaks["rss_mb"] <= MEMORY_BOUND_MB,
    }


async def _agents(base_url: str, agents: int, duration_s: float) -> Tally:
    tally = Tally()
    deadline_s = time.monotonic() + duration_s
    url = base_url.replace("http://", "ws://") + "/responses"
    await asyncio.gather(*(_agent(url, index, deadline_s, tally) for index in range(agents)))
    return tally


async def _agent(url: str, index: int, deadline_s: float, tally: Tally) -> None:
    """Rollouts until the deadline, reconnecting when the server closes the connection."""
    rollout = index * 1_000
    while time.monotonic() < deadline_s:
        try:
            async with websockets.connect(url, additional_headers=AUTH, max_size=None) as ws:
                while time.monotonic() < deadline_s:
                    await _rollout(ws, rollout, deadline_s, tally)
                    rollout += 1
        except (websockets.ConnectionClosed, OSError):
            tally.reconnects += 1
            await asyncio.sleep(0.1)


async def _rollout(ws: Any, rollout: int, deadline_s: float, tally: Tally) -> None:
    request: dict[str, Any] = {
        "type": "response.create",
        "model": "m",
        "input": "fix the failing test",
        "store": False,
        "metadata": {"loopbudget_rollout": str(rollout)},
    }
    while time.monotonic() < deadline_s:
        sent_s = time.monotonic()
        await ws.send(json.dumps(request))
        event = await _outcome(ws)
        if event["type"] == "error":
            code = event["error"]["code"]
            tally.errors[code] = tally.errors.get(code, 0) + 1
            return
        tally.completed += 1
        tally.response_s.append(time.monotonic() - sent_s)
        response = event["response"]
        call = response["output"][-1] if response["output"] else {}
        if call.get("type") != "function_call":
            return
        await asyncio.sleep(TOOL_S)
        answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}
        request = {**request, "input": [answer], "previous_response_id": response["id"]}


async def _outcome(ws: Any) -> dict[str, Any]:
    while True:
        event = json.loads(await ws.recv())
        if event["type"] in ("error", "response.completed"):
            return event


def _server_pid() -> int:
    """The emulator's process: this process's child running ``sim.testbed.server``."""
    own = str(os.getpid())
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = status.read_text().rsplit(")", 1)[1].split()[1]
            command = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if parent == own and b"sim.testbed.server" in command:
            return int(status.parent.name)
    raise RuntimeError("the emulator's process was not found")


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` (VmRSS of /proc/PID/status), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def _sockets(pid: int) -> int:
    """Sockets the process holds open (its connections, its listener)."""
    return sum(
        1 for fd in Path(f"/proc/{pid}/fd").iterdir() if os.readlink(fd).startswith("socket:")
    )


@contextmanager
def _sampled(pid: int) -> Iterator[dict[str, float]]:
    """The peak resident memory (MB) and open sockets of process ``pid``, sampled until the
    block ends."""
    peak = {"rss_mb": _rss_mb(pid), "sockets": _sockets(pid)}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            try:
                peak["rss_mb"] = max(peak["rss_mb"], _rss_mb(pid))
                peak["sockets"] = max(peak["sockets"], _sockets(pid))
            except OSError:
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


@contextmanager
def _idle(base_url: str, count: int) -> Iterator[None]:
    port = int(base_url.rsplit(":", 1)[1].split("/")[0])
    held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(count)]
    try:
        yield
    finally:
        for connection in held:
            connection.close()


def _answers(base_url: str) -> bool:
    body = {"model": "m", "input": "still there?"}
    answer = httpx2.post(base_url + "/responses", json=body, headers=AUTH, timeout=60)
    return answer.status_code == 200


def _raise_open_files(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, needed), hard))


def _summary(results: dict[str, Any]) -> str:
    memory = results["server_rss_mb"]
    return (
        f"{results['idle_connections']:,} idle connections and {results['agents']} WebSocket "
        f"agents for {results['duration_s']:g} s: stayed up {results['stayed_up']}, answered "
        f"afterwards {results['answered_afterwards']}; {results['responses_completed']:,} "
        f"responses ({results['responses_per_s']:.0f}/s), p50 {results['response_ms']['p50']:.0f}"
        f" ms, p99 {results['response_ms']['p99']:.0f} ms, errors {results['error_events']}, "
        f"reconnects {results['reconnects']}; server memory {memory['baseline']:.0f} MB -> peak "
        f"{memory['peak']:.0f} MB ({results['peak_over_baseline']:.2f}x; bound "
        f"{results['memory_bound_mb']:,} MB)"
    )


if __name__ == "__main__":
    main()
