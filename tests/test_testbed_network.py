"""The network the scenario asks for: a link that delays every chunk by half the round trip,
a netem namespace that is always removed (or refused cleanly), and a testbed run at a 150 ms
round trip that measures that round trip and matches the simulation with it."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import time
from collections.abc import Callable

import pytest
from support import CliResult, assert_one_line_error, scenario
from testbed_support import kept

from sim.cli.testbed import network_line
from sim.testbed import clock
from sim.testbed.clock import TimerLead
from sim.testbed.link import DelayLink
from sim.testbed.network import EMULATED, NETEM, NetemUnavailable, netem_namespace
from sim.testbed.results import Key
from sim.testbed.session import Request, run_testbed
from sim.testbed.timescale import scale_time
from sim.turn.transports import Transport

Cli = Callable[..., CliResult]
LINK_RTT_S = 0.020
RTT_MS = 150.0
TIME_SCALE = 0.5
RTT_TOLERANCE = 0.10
E2E_TOLERANCE = 0.05


@pytest.mark.live
def test_the_link_delays_each_way_by_half_the_round_trip_and_the_handshake_by_one() -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
        writer.close()

    async def measure() -> tuple[float, list[float]]:
        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        link = DelayLink(server.sockets[0].getsockname()[1], LINK_RTT_S, await TimerLead.measure())
        port = await link.start("127.0.0.1")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        rounds = []
        for _ in range(30):
            start_s = time.monotonic()
            writer.write(b"ping")
            await reader.readexactly(4)
            rounds.append(time.monotonic() - start_s)
        writer.close()
        await link.close()
        server.close()
        return rounds[0], rounds[1:]

    first_s, rounds_s = clock.run(measure)
    assert statistics.fmean(rounds_s) == pytest.approx(LINK_RTT_S, rel=RTT_TOLERANCE)
    # The first bytes of a connection wait for the handshake's round trip too (one sample,
    # so a loose bound: a load spike may make it late).
    assert 2 * LINK_RTT_S * (1 - RTT_TOLERANCE) < first_s < 3 * LINK_RTT_S


def _leftovers() -> str:
    found = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=False)
    return "\n".join(
        line
        for line in (found.stdout + links.stdout).splitlines()
        if "loopbudget" in line or " lbo" in line
    )


@pytest.mark.live
def test_a_netem_namespace_is_made_and_always_removed_or_refused_cleanly() -> None:
    before = _leftovers()
    scaled = scale_time(scenario("codex-spark", f"network.rtt_ms={RTT_MS}"), 0.1)
    try:
        with netem_namespace(scaled) as (namespace, address):
            listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
            assert namespace in listed.stdout and address.startswith("10.")
    except NetemUnavailable as refused:
        assert str(refused)  # the reason is what the run prints beside "emulated"
    assert _leftovers() == before


@pytest.mark.live
@pytest.mark.slow
def test_a_150_ms_round_trip_is_measured_and_simulated() -> None:
    spec = scenario("codex-spark", f"network.rtt_ms={RTT_MS}", "workload.tool_calls_per_rollout=10")
    result = kept(run_testbed(Request("rtt-150", spec, (Transport.WS,), 4, TIME_SCALE)))
    network = result.network
    assert network["mode"] in (NETEM, EMULATED) and network["rtt_ms"] == RTT_MS
    assert network["measured_rtt_ms"] == pytest.approx(RTT_MS, rel=RTT_TOLERANCE), network
    entry = result.transports["ws"]
    assert abs(entry.rel_errors[Key.E2E_MEAN]) < E2E_TOLERANCE, entry.to_json()
    # The simulation's round trip is the fitted one: the link's plus the SDK's handling of
    # an event (docs/testbed.md), so never below what the link measured.
    assert entry.client["rtt_ms"] / TIME_SCALE > network["measured_rtt_ms"] * (1 - RTT_TOLERANCE)
    assert network_line(network).startswith(f"network: {network['mode']}, round trip 150 ms")


def test_serve_refuses_a_round_trip_out_of_range(cli: Cli) -> None:
    assert_one_line_error(cli("testbed", "serve", "codex-spark", "--rtt-ms", "-5"), "--rtt-ms")
