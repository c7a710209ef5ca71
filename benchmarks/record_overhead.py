"""The recording proxy's added latency on loopback: ``python -m benchmarks.record_overhead``.

The emulator (time-scaled codex-spark, 10 tool calls a rollout) runs in a child
process and ``loopbudget record`` in another in front of it; the official SDK's
agent loops (the testbed's driver) run the same seeded rollouts of each transport
straight to the emulator and through the proxy, alternately, so each request
through the proxy has a twin sent directly.  Reported, per transport:

- the proxy's own measure of what it adds to a request (taking the request to
  passing it on, and passing on the event that ends the response), p50 and p99
  over every request, as ``loopbudget record`` prints it on exit;
- the proxy process's CPU time per request once it listens (what a loaded machine
  must find for it);
- the client's view: each proxied request's time less its direct twin's, p50 and
  p99, beside the same statistic for two direct runs of the same rollouts (the
  noise floor of the pairing on this machine).

The target is at most 1 ms p50 and 5 ms p99 on loopback.  Results go to
``benchmarks/results-record.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
from sim.turn.transports import Transport

OUTPUT = Path(__file__).resolve().parent / "results-record.json"
TIME_SCALE = 0.05
TRANSPORTS = (Transport.HTTP, Transport.HTTP_FULL, Transport.WS)
LOOPBUDGET = Path(sys.executable).with_name("loopbudget")
_PRINTED = re.compile(r"added ([0-9.]+) ms p50, ([0-9.]+) ms p99")


def _request_s(rollouts: list[RolloutRecord]) -> np.ndarray:
    return np.array([t.request_s for r in rollouts for t in r.turns])


def _percentiles_ms(values_s: np.ndarray) -> dict[str, float]:
    return {
        "p50_ms": float(np.percentile(values_s, 50) * 1e3),
        "p99_ms": float(np.percentile(values_s, 99) * 1e3),
        "mean_ms": float(values_s.mean() * 1e3),
        "requests": int(values_s.size),
    }


async def _paired(
    scaled: Any, direct_url: str, proxy_url: str, rollouts: int
) -> dict[str, dict[str, Any]]:
    lead = await TimerLead.measure()
    results = {}
    for transport in TRANSPORTS:
        direct = Agent(scaled, transport, direct_url, DEFAULT_API_KEY, lead)
        proxied = Agent(scaled, transport, proxy_url, DEFAULT_API_KEY, lead)
        await direct.rollout(rollouts)  # the SDK's first use of a transport costs more
        await proxied.rollout(rollouts)
        first, second, through = [], [], []
        for index in range(rollouts):
            first.append(await direct.rollout(index))
            through.append(await proxied.rollout(index))
            second.append(await direct.rollout(index))
        baseline = _request_s(second) - _request_s(first)
        added = _request_s(through) - (_request_s(first) + _request_s(second)) / 2
        results[transport.value] = {
            "client_view_added": _percentiles_ms(added),
            "direct_twice_difference": _percentiles_ms(baseline),
        }
    return results


def _cpu_s(pid: int) -> float:
    """CPU seconds (user and system) a process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(rollouts: int) -> dict[str, Any]:
    scenario = load_scenario("codex-spark", ("workload.tool_calls_per_rollout=10",))
    scaled = scale_time(scenario, TIME_SCALE)
    with tempfile.TemporaryDirectory() as folder, emulator_process(scaled, ServerSettings()) as url:
        trace = Path(folder) / "bench.otel.json"
        command = [str(LOOPBUDGET), "record", "--upstream", url, "--out", str(trace)]
        proxy = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            proxy_url = proxy.stdout.readline().split()[3].rstrip(";")
            ready_cpu_s = _cpu_s(proxy.pid)
            started_s = time.monotonic()
            paired = clock.run(lambda: _paired(scaled, url, proxy_url, rollouts))
            elapsed_s = time.monotonic() - started_s
            cpu_s = _cpu_s(proxy.pid) - ready_cpu_s
        finally:
            proxy.send_signal(signal.SIGINT)
            printed = proxy.stdout.read()
            proxy.wait(timeout=60)
        found = _PRINTED.search(printed)
    return {
        "time_scale": TIME_SCALE,
        "rollouts_per_transport": rollouts,
        "elapsed_s": elapsed_s,
        "proxy_cpu_s": cpu_s,
        "proxy_own_measure": {
            "p50_ms": float(found.group(1)) if found else None,
            "p99_ms": float(found.group(2)) if found else None,
            "printed": printed.strip(),
        },
        "transports": paired,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=8, help="rollouts per transport")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    result = measure(args.rollouts)
    own = result["proxy_own_measure"]
    print(own["printed"])
    requests = sum(e["client_view_added"]["requests"] for e in result["transports"].values())
    print(f"proxy CPU: {result['proxy_cpu_s'] / requests * 1e3:.2f} ms a request (after start-up)")
    print(f"{'transport':10} {'client view p50/p99 ms':>24} {'direct twice p50/p99 ms':>25}")
    for name, entry in result["transports"].items():
        seen, floor = entry["client_view_added"], entry["direct_twice_difference"]
        print(
            f"{name:10} {seen['p50_ms']:>11.3f} / {seen['p99_ms']:<10.3f} "
            f"{floor['p50_ms']:>11.3f} / {floor['p99_ms']:<10.3f}"
        )
    args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
