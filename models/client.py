"""The client side of the scenario tree: what the client and the network cost, and the
connection's lifetime and storage contract."""

from __future__ import annotations

from models.fields import Section, param
from models.strict import Bool, Float


class Client(Section):
    """The agent's client (an SDK in the agent's process)."""

    build_fixed_ms: Float = param("fixed cost to prepare a request", "assumption", ge=0, le=1e4)
    build_per_item_ms: Float = param(
        "cost per input item sent (the SDK checks each against the input union)",
        "FACTS: openai SDK 3.51.0, about 0.65 ms per item",
        ge=0,
        le=1e3,
    )
    http_request_overhead_ms: Float = param(
        "extra client cost of an HTTP JSON request over a WebSocket message",
        "FACTS: about 0.5 ms on loopback",
        ge=0,
        le=1e3,
    )
    ws_handshake_ms: Float = param(
        "client-side cost of the WebSocket upgrade through the SDK",
        "FACTS: about 3.6 ms on loopback",
        ge=0,
        le=1e4,
    )
    keepalive_idle_s: Float = param(
        "idle time after which the HTTP keep-alive connection is closed",
        "FACTS: about 5 s in the SDK's pool and common servers",
        gt=0,
        le=3600,
    )
    parallel_call_overhead_ms: Float = param(
        "client time to dispatch and collect each parallel call beyond the first",
        "assumption (0: calls cost only the slowest one's time)",
        ge=0,
        le=1e4,
    )
    tool_starts_on_call_item: Bool = param(
        "the client starts a tool at response.output_item.done (the function call item), "
        "so blocking post-inference work overlaps the tool; false: at response.completed",
        "FACTS: Responses API streaming events; false is the SDK's non-streaming default",
    )


class Network(Section):
    """The path between the client and the API."""

    rtt_ms: Float = param("round-trip time client <-> API", "assumption", ge=0, le=5000)
    uplink_bytes_per_s: Float = param("client upload bandwidth", "assumption", ge=1)
    downlink_bytes_per_s: Float = param("client download bandwidth", "assumption", ge=1)
    bytes_per_token: Float = param(
        "bytes of JSON text per token on the wire", "about 4 characters per token", gt=0, le=64
    )
    request_overhead_bytes: Float = param(
        "headers and envelope per request", "assumption", ge=0, le=1e6
    )
    tcp_handshake_rtts: Float = param("round trips of the TCP handshake", "TCP", ge=0, le=10)
    tls_handshake_rtts: Float = param("round trips of the TLS handshake", "TLS 1.3", ge=0, le=10)
    ws_upgrade_rtts: Float = param(
        "round trips of the HTTP->WebSocket upgrade", "RFC 6455", ge=0, le=10
    )
    tls_crypto_ms: Float = param(
        "CPU time of the TLS key exchange (both ends)", "assumption", ge=0, le=1000
    )


class Connection(Section):
    """The WebSocket connection and the server's storage contract."""

    ws_lifetime_s: Float = param(
        "a WebSocket connection lives at most this long, then the client reconnects",
        "FACTS: 60 minutes",
        gt=0,
        le=86400,
    )
    ws_drops_per_hour: Float = param(
        "rate of unplanned connection drops (a Poisson process)", "assumption", ge=0, le=3600
    )
    store: Bool = param(
        "store=true: lost cache state is reloaded from storage; store=false: the "
        "continuation fails with previous_response_not_found and the client resends all",
        "FACTS: server contract",
    )
    reuse_across_rollouts: Bool = param(
        "an agent keeps its connection (the WebSocket, or the HTTP keep-alive) from one "
        "rollout to its next, load.think_time_s apart, so lifetime, drops and the idle "
        "timeout count over its whole session; false: every rollout opens its own",
        "assumption: the SDK's client and its WebSocket outlive one task (FACTS: a "
        "connection lives up to 60 minutes); false keeps one rollout alone",
    )
