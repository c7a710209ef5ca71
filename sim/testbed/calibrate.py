"""Measure the client and the network before a run: what the simulation then uses for them.

A short calibration workload (per transport, one rollout that warms the SDK up,
whose first use of a transport takes tens of milliseconds more, then a
measured one, each cut after 9 turns; draws of their own) runs through
the same agent loops; every turn is
split against the server's log (``observe``).  Fitted, in the model's terms:

- ``network.rtt_ms``: twice the mean time from the server sending an event to
  the SDK yielding it (the wire plus the SDK's handling of one event; the bare
  WebSocket ping is reported beside it);
- ``client.build_fixed_ms``, ``build_per_item_ms``, ``http_request_overhead_ms``:
  the time up to the server taking a warm request, ``a + b x items + c x http``,
  less half that round trip (per-byte costs of the requests are in ``a`` and ``b``,
  so the uplink is taken as unlimited);
- ``network.downlink_bytes_per_s``: the rest of the time after the last event,
  per output byte (the SDK reading the final events and the response);
- ``network.tls_crypto_ms`` (no TLS on loopback: the time of setting up a TCP
  connection, both ends) and ``client.ws_handshake_ms`` (the rest of
  ``client.responses.connect()``): handshakes are taken whole, their round
  trips on the wire are the bare ping (tens of microseconds), so the model's
  handshake round trips are set to zero.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import websockets

from models.loading import with_changes
from models.scenario import Scenario
from sim.testbed.app import CALIBRATION_HEADER
from sim.testbed.clock import TimerLead
from sim.testbed.driver import Agent
from sim.testbed.observe import ServerView, TurnSplit, split_turns
from sim.testbed.records import RolloutRecord
from sim.turn.transports import Transport

CALIBRATION_REPLICATION = 999
"""Draws of the calibration rollouts (apart from every run's)."""
UNLIMITED_BYTES_PER_S = 1e12
CALIBRATION_TURNS = 9
_ITEM_SPREAD = 5
"""Fewest items between the smallest and the largest request to fit a per-item cost."""
_ROLLOUTS = 1
_PINGS = 30
_CONNECTS = 5
_TRANSPORTS = (Transport.HTTP, Transport.HTTP_FULL, Transport.WS)


@dataclass(frozen=True)
class ClientCosts:
    """The measured client and network, in the scenario's units."""

    rtt_ms: float
    ping_rtt_ms: float
    build_fixed_ms: float
    build_per_item_ms: float
    http_request_overhead_ms: float
    ws_handshake_ms: float
    connection_setup_ms: float
    downlink_bytes_per_s: float
    turns: int

    def apply(self, scenario: Scenario) -> Scenario:
        """``scenario`` with this client and network (loopback: no TLS, no byte limits)."""
        return with_changes(
            scenario,
            [
                f"client.build_fixed_ms={self.build_fixed_ms!r}",
                f"client.build_per_item_ms={self.build_per_item_ms!r}",
                f"client.http_request_overhead_ms={self.http_request_overhead_ms!r}",
                f"client.ws_handshake_ms={self.ws_handshake_ms!r}",
                f"network.rtt_ms={self.rtt_ms!r}",
                f"network.uplink_bytes_per_s={UNLIMITED_BYTES_PER_S!r}",
                f"network.downlink_bytes_per_s={self.downlink_bytes_per_s!r}",
                "network.request_overhead_bytes=0.0",
                "network.tcp_handshake_rtts=0.0",
                "network.tls_handshake_rtts=0.0",
                "network.ws_upgrade_rtts=0.0",
                f"network.tls_crypto_ms={self.connection_setup_ms!r}",
            ],
        )

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    def refit(
        self,
        transport: Transport,
        splits: list[TurnSplit],
        per_token: float,
        connections: bool = True,
    ) -> ClientCosts:
        """These costs refitted to turns of one transport taken under the run's conditions
        (the machine's load drifts; a fleet's client is busier): the round trip, the fixed
        build cost, the download, the cost of a new connection where some turns opened one
        and, where the requests' sizes vary enough (``http-full``, resends after a cache
        miss), the per-item cost.  ``connections=False`` keeps the connection costs (when
        the turns are the measured ones, whose new connections are what is tested)."""
        rtt_s = 2.0 * float(np.mean([s.gap_s for s in splits]))
        http_s = 0.0 if transport.is_websocket else self.http_request_overhead_ms * 1e-3
        warm = [s for s in splits if not s.turn.new_connections]
        items = np.array([s.turn.items_sent for s in warm], dtype=float)
        up_s = np.array([s.up_s for s in warm])
        per_item_s = self.build_per_item_ms * 1e-3
        if np.ptp(items) >= _ITEM_SPREAD if items.size else False:
            design = np.column_stack([np.ones_like(items), items])
            per_item_s = max(0.0, float(np.linalg.lstsq(design, up_s, rcond=None)[0][1]))
        base_s = float(np.mean(up_s - per_item_s * items))
        cold = [
            s.up_s - base_s - per_item_s * s.turn.items_sent
            for s in splits
            if s.turn.new_connections
        ]
        setup_ms, handshake_ms = self.connection_setup_ms, self.ws_handshake_ms
        if cold and connections and transport.is_websocket:
            handshake_ms = max(0.0, float(np.mean(cold)) * 1e3 - setup_ms)
        elif cold and connections:
            setup_ms = max(0.0, float(np.mean(cold)) * 1e3)
        return replace(
            self,
            rtt_ms=rtt_s * 1e3,
            build_fixed_ms=max(0.0, base_s - rtt_s / 2 - http_s) * 1e3,
            build_per_item_ms=per_item_s * 1e3,
            ws_handshake_ms=handshake_ms,
            connection_setup_ms=setup_ms,
            downlink_bytes_per_s=_downlink(splits, rtt_s, per_token),
            turns=len(splits),
        )


UNMEASURED = ClientCosts(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, UNLIMITED_BYTES_PER_S, 0)
"""A client with no costs: the base that ``refit`` fills in from turns alone."""


async def measure_client(
    scenario: Scenario, base_url: str, api_key: str, lead: TimerLead
) -> ClientCosts:
    """Run the calibration workload against ``base_url`` and fit the client's costs."""
    view = ServerView(base_url, api_key)
    by_transport: dict[Transport, list[TurnSplit]] = {}
    for transport in _TRANSPORTS:
        agent = Agent(scenario, transport, base_url, api_key, lead, calibration=True)
        await calibration_rollout(agent, _ROLLOUTS)
        rollouts = [await calibration_rollout(agent, r) for r in range(_ROLLOUTS)]
        await view.refresh()
        by_transport[transport] = split_turns(rollouts, view)
    ping_s = await _ping_s(base_url, api_key)
    connect_s = await _ws_connect_s(scenario, base_url, api_key, lead)
    return _fit(by_transport, ping_s, connect_s, scenario.network.bytes_per_token)


def _fit(
    splits: dict[Transport, list[TurnSplit]], ping_s: float, connect_s: float, per_token: float
) -> ClientCosts:
    every = [s for group in splits.values() for s in group]
    rtt_s = 2.0 * float(np.mean([s.gap_s for s in every]))
    warm = [(t, s) for t, group in splits.items() for s in group if s.turn.new_connections == 0]
    design = np.array(
        [[1.0, s.turn.items_sent, float(not t.is_websocket)] for t, s in warm], dtype=float
    )
    up_s = np.array([s.up_s for _, s in warm])
    a_s, per_item_s, http_s = (float(v) for v in np.linalg.lstsq(design, up_s, rcond=None)[0])
    cold_http = [
        s.up_s - (a_s + per_item_s * s.turn.items_sent + http_s)
        for t, group in splits.items()
        if not t.is_websocket
        for s in group
        if s.turn.new_connections > 0
    ]
    setup_s = max(0.0, float(np.mean(cold_http))) if cold_http else 0.0
    handshake_s = max(0.0, connect_s - setup_s)
    return ClientCosts(
        rtt_ms=rtt_s * 1e3,
        ping_rtt_ms=ping_s * 1e3,
        build_fixed_ms=max(0.0, float(a_s) - rtt_s / 2) * 1e3,
        build_per_item_ms=max(0.0, per_item_s) * 1e3,
        http_request_overhead_ms=max(0.0, http_s) * 1e3,
        ws_handshake_ms=handshake_s * 1e3,
        connection_setup_ms=setup_s * 1e3,
        downlink_bytes_per_s=_downlink(every, rtt_s, per_token),
        turns=len(every),
    )


def _downlink(splits: list[TurnSplit], rtt_s: float, per_token: float) -> float:
    """Output bytes per second of what follows the last event (beyond half the round trip)."""
    spent_s = sum(s.down_s - rtt_s / 2 for s in splits)
    output_bytes = sum(s.output_tokens * per_token for s in splits)
    return output_bytes / spent_s if spent_s > 0 else UNLIMITED_BYTES_PER_S


async def calibration_rollout(agent: Agent, index: int) -> RolloutRecord:
    """One calibration rollout (its own draws, cut after ``CALIBRATION_TURNS`` turns)."""
    return await agent.rollout(index, CALIBRATION_REPLICATION, CALIBRATION_TURNS)


def _ws_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://", 1).replace("https://", "wss://", 1) + "/responses"


async def _ping_s(base_url: str, api_key: str) -> float:
    """Mean WebSocket ping round trip (the protocol layer only, no application; over an
    emulated link, the link's round trip, whose relay is on time on average)."""
    headers = {"Authorization": f"Bearer {api_key}", CALIBRATION_HEADER: "1"}
    async with websockets.connect(_ws_url(base_url), additional_headers=headers) as socket:
        rounds = []
        for _ in range(_PINGS):
            start_s = time.monotonic()
            await (await socket.ping())
            rounds.append(time.monotonic() - start_s)
    return statistics.fmean(rounds)


async def _ws_connect_s(scenario: Scenario, base_url: str, api_key: str, lead: TimerLead) -> float:
    """Mean time of ``client.responses.connect()`` through the SDK."""
    agent = Agent(scenario, Transport.WS, base_url, api_key, lead, calibration=True)
    times = []
    async with agent.sdk() as client:
        for _ in range(_CONNECTS):
            start_s = time.monotonic()
            connection = await client.responses.connect(extra_headers=agent.headers).enter()
            times.append(time.monotonic() - start_s)
            await connection.close()
    return float(np.mean(times))
