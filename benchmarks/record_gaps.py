"""What a recorded tool gap consists of: ``python -m benchmarks.record_gaps``.

The recording proxy times a tool call from passing on the response that asked for it
to taking the request that carries its answer.  The driver (the official SDK's agent
loop) times the same step from reading the bytes of ``response.completed`` off its
socket to writing the first bytes of its next request: its tool, the SDK parsing the
event, building the next request.  The proxy's gap is the driver's plus two hops: the
end of the response on its way to the driver and the next request on its way to the
proxy (each a wake-up of a process that may wait for a core).  Both processes read the
same monotonic clock, so each hop is measured on its own: the trace's epoch times less
the offset the proxy used.

Codex-spark (10 tool calls a rollout, time scale 0.1) runs through ``loopbudget record``
in front of the emulator over HTTP, http-full and WebSocket mode.  Reported per
transport: the gap's excess over the driver's step (p50, p90, p99, max, and the share
within 2 ms), split into the two hops, with the machine's load average.  Results go to
``benchmarks/results-record-gaps.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from models.loading import load_scenario
from sim.testbed import clock
from sim.testbed.clock import TimerLead
from sim.testbed.driver import Agent
from sim.testbed.records import RolloutRecord
from sim.testbed.server import DEFAULT_API_KEY, ServerSettings, emulator_process
from sim.testbed.timescale import scale_time
from sim.traces.read import read_rollouts
from sim.turn.transports import Transport

OUTPUT = Path(__file__).resolve().parent / "results-record-gaps.json"
TIME_SCALE = 0.1
TOLERANCE_S = 0.002
TRANSPORTS = (Transport.HTTP, Transport.HTTP_FULL, Transport.WS)
LOOPBUDGET = Path(sys.executable).with_name("loopbudget")


def _distribution_ms(values_s: list[float]) -> dict[str, float]:
    values = np.array(values_s) * 1e3
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p90_ms": float(np.percentile(values, 90)),
        "p99_ms": float(np.percentile(values, 99)),
        "max_ms": float(values.max()),
        "share_within_2ms": float(np.mean(np.abs(values) < TOLERANCE_S * 1e3)),
        "gaps": int(values.size),
    }


def _gaps(
    driven: list[RolloutRecord], traced: dict[str, Any], offset_s: float
) -> dict[str, dict[str, float]]:
    excess, downstream, parsing, upstream = [], [], [], []
    for rollout in driven:
        for turn, after in zip(rollout.turns, rollout.turns[1:], strict=False):
            asked, answered = traced[turn.response_id], traced[after.response_id]
            [call] = asked.tool_calls
            excess.append((call.end_s - call.start_s) - (after.sent_at_s - turn.received_at_s))
            downstream.append(turn.received_at_s - (asked.end_s - offset_s))
            parsing.append(turn.completed_at_s - turn.received_at_s)
            upstream.append((answered.start_s - offset_s) - after.sent_at_s)
    return {
        "gap_less_driver_step": _distribution_ms(excess),
        "response_end_to_driver_socket": _distribution_ms(downstream),
        "sdk_parsing_the_end": _distribution_ms(parsing),
        "driver_send_to_proxy": _distribution_ms(upstream),
    }


def measure(rollouts: int) -> dict[str, Any]:
    scenario = load_scenario("codex-spark", ("workload.tool_calls_per_rollout=10",))
    scaled = scale_time(scenario, TIME_SCALE)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder, emulator_process(scaled, ServerSettings()) as url:
        trace = Path(folder) / "gaps.otel.json"
        command = [str(LOOPBUDGET), "record", "--upstream", url, "--out", str(trace)]
        proxy = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        # Epoch less monotonic time: the proxy's offset, up to the wall clock's adjustments.
        offset_s = time.time() - time.monotonic()
        try:
            proxy_url = proxy.stdout.readline().split()[3].rstrip(";")

            async def drive() -> dict[Transport, list[RolloutRecord]]:
                lead = await TimerLead.measure()
                out = {}
                for transport in TRANSPORTS:
                    agent = Agent(scaled, transport, proxy_url, DEFAULT_API_KEY, lead)
                    out[transport] = [await agent.rollout(r) for r in range(rollouts)]
                return out

            driven = clock.run(drive)
        finally:
            proxy.send_signal(signal.SIGINT)
            proxy.communicate(timeout=60)
        traced = {r.response_id: r for rollout in read_rollouts(trace) for r in rollout}
    return {
        "time_scale": TIME_SCALE,
        "rollouts_per_transport": rollouts,
        "load_average_1min": [load_before[0], os.getloadavg()[0]],
        "transports": {t.value: _gaps(driven[t], traced, offset_s) for t in TRANSPORTS},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=6, help="rollouts per transport")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    result = measure(args.rollouts)
    print(f"load average (1 min) before and after: {result['load_average_1min']}")
    for name, parts in result["transports"].items():
        for part, d in parts.items():
            print(
                f"{name:10} {part:30} p50 {d['p50_ms']:7.3f} p90 {d['p90_ms']:7.3f} "
                f"p99 {d['p99_ms']:8.3f} max {d['max_ms']:8.3f} ms; within 2 ms "
                f"{d['share_within_2ms']:.0%} of {d['gaps']}"
            )
    args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
