"""The network between the driver and the emulator: the one the scenario asks for, for real.

Three modes, and the run says which one it had:

- ``netem``: where the machine allows it (root or CAP_NET_ADMIN, iproute2's ``ip``
  and ``tc``, the kernel's netem queueing discipline), the emulator runs in a
  network namespace of its own at the far end of a veth pair, and ``tc netem``
  on each end delays every packet by half the round trip and limits its rate to
  the scenario's uplink (driver to emulator) and downlink bandwidth.  The
  namespace and the pair are created for the run and always deleted after it.
- ``emulated``: elsewhere the emulator's process listens through a relay that
  delays every chunk by half the round trip each way (``link``); no bandwidth.
- ``loopback``: asked for (``--network loopback``), or a scenario without a round
  trip: the driver and the emulator talk over loopback as they are.

The round trip and the rates are the time-scaled scenario's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any

from models.scenario import Scenario
from sim.testbed.server import ServerSettings

NETEM, EMULATED, LOOPBACK = "netem", "emulated", "loopback"
ENDPOINT = "endpoint"
"""Another endpoint (``--base-url``): the network is whatever lies between."""
SCENARIO = "scenario"
"""The network the scenario asks for: netem where the machine allows it, else emulated."""
CHOICES = (SCENARIO, LOOPBACK)
_COMMAND_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Network:
    """Which network a run had, and why."""

    mode: str
    rtt_ms: float
    """The round trip asked for, in scenario milliseconds (before time scaling)."""
    note: str = ""
    measured_rtt_ms: float | None = None
    """A WebSocket ping's round trip over the link, in scenario milliseconds (calibrated runs)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class NetemUnavailable(RuntimeError):
    """The machine would not give the testbed a netem link (the reason is the message)."""


def _run(*command: str) -> None:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=_COMMAND_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()
        raise NetemUnavailable(f"{' '.join(command[:4])}: {reason[0] if reason else 'failed'}")


def _rate(bytes_per_s: float) -> str:
    return f"{max(8.0, bytes_per_s * 8.0):.0f}bit"


@contextmanager
def netem_namespace(scaled: Scenario) -> Iterator[tuple[str, str]]:
    """A namespace and veth pair with netem on both ends; yields (namespace, server address).
    Raises ``NetemUnavailable`` (having removed what it made) where the machine refuses."""
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None:
        raise NetemUnavailable("needs root (CAP_NET_ADMIN) and iproute2's ip and tc")
    tag = os.getpid() % 100_000
    namespace, outer, inner = f"loopbudget{tag}", f"lbo{tag}", f"lbi{tag}"
    subnet = f"10.{200 + tag // 65_536 % 50}.{tag // 256 % 256}.{tag % 64 * 4}"
    prefix = subnet.rsplit(".", 1)[0]
    last = int(subnet.rsplit(".", 1)[1])
    near, far = f"{prefix}.{last + 1}", f"{prefix}.{last + 2}"
    n = scaled.network
    delay = f"{n.rtt_ms / 2:.6f}ms"
    try:
        _run("ip", "netns", "add", namespace)
        _run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
        _run("ip", "link", "set", inner, "netns", namespace)
        _run("ip", "addr", "add", f"{near}/30", "dev", outer)
        _run("ip", "link", "set", outer, "up")
        _run("ip", "-n", namespace, "addr", "add", f"{far}/30", "dev", inner)
        _run("ip", "-n", namespace, "link", "set", inner, "up")
        _run("ip", "-n", namespace, "link", "set", "lo", "up")
        up, down = _rate(n.uplink_bytes_per_s), _rate(n.downlink_bytes_per_s)
        _run("tc", "qdisc", "add", "dev", outer, "root", "netem", "delay", delay, "rate", up)
        _run(
            "tc",
            "-n",
            namespace,
            "qdisc",
            "add",
            "dev",
            inner,
            "root",
            "netem",
            "delay",
            delay,
            "rate",
            down,
        )
        yield namespace, far
    finally:
        subprocess.run(["ip", "link", "del", outer], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)


@contextmanager
def testbed_network(
    scaled: Scenario, time_scale: float, wanted: str, settings: ServerSettings
) -> Iterator[tuple[ServerSettings, tuple[str, ...], Network]]:
    """The emulator's settings and command prefix for the network ``wanted``, and which one
    it is; netem is set up here and removed on exit."""
    rtt_ms = scaled.network.rtt_ms / time_scale
    if wanted == LOOPBACK or scaled.network.rtt_ms <= 0:
        note = "asked for" if wanted == LOOPBACK else "the scenario has no round trip"
        yield settings, (), Network(LOOPBACK, rtt_ms, note)
        return
    try:
        with netem_namespace(scaled) as (namespace, address):
            prefix = ("ip", "netns", "exec", namespace)
            yield replace(settings, host=address), prefix, Network(NETEM, rtt_ms)
            return
    except NetemUnavailable as refused:
        note = f"netem unavailable ({refused}); chunks delayed by the emulator's relay"
    linked = replace(settings, link_rtt_s=scaled.network.rtt_ms * 1e-3)
    yield linked, (), Network(EMULATED, rtt_ms, note)
