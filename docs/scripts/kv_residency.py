"""KV residency: what the emerging prefix-cache hit rate changes (docs/model/workload.md,
docs/load.md).

The Amdahl curve with residency on (http round-robin, ws affinity) beside the
simple mode, the re-prefill against history length and prefill speed, the hit
rate against routing policy and tool gap, and the capacity ratio against KV
memory per replica.

    .venv/bin/python -m docs.scripts.kv_residency
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, percent, table
from models.loading import load_scenario
from models.scenario import Scenario
from sim.analysis.fleet_analytic import analytic_points
from sim.analytic.agent.engine import Expectation, expect
from sim.capacity.objectives import with_agents
from sim.des.runners import simulate, simulate_fleet
from sim.turn.transports import Transport

PRESET = "codex-spark"
RESIDENT = "kv_cache.residency=true"
SPEEDS_TPS = (30, 65, 150, 500, 1000, 2000, 4000)
CALLS = (10, 20, 40, 80)
PREFILL_TPS = (6000, 20000, 60000, 200000)
POLICIES = ("affinity", "consistent-hash", "least-loaded", "random", "round-robin")
GAPS_S = (0.1, 10.0, 120.0, 600.0)
GAP_ROLLOUTS = 40
MEMORY_BYTES = (5e9, 1e10, 2e10, 4e10, 1.2e11, 4e11)
FLEET_AGENTS = 200
FLEET_WINDOW_S = 200
TTFT_LIMIT_S = 1.0
E2E_LIMIT_S = 40.0
"""The headline's SLO limits (docs/load.md), on the analytic fleet's means."""


@cache
def scenario(*overrides: str) -> Scenario:
    return load_scenario(PRESET, overrides)


@cache
def pair(*overrides: str) -> tuple[Expectation, Expectation]:
    s = scenario(*overrides)
    return expect(s, Transport.HTTP), expect(s, Transport.WS)


def saved_s(*overrides: str) -> float:
    http, ws = pair(*overrides)
    return http.e2e_s - ws.e2e_s


def reduction(*overrides: str) -> float:
    http, ws = pair(*overrides)
    return 1.0 - ws.e2e_s / http.e2e_s


def amdahl() -> str:
    body = []
    for rate in SPEEDS_TPS:
        speed = f"inference.decode_tps={float(rate)!r}"
        http, ws = pair(speed, RESIDENT)
        body.append(
            [
                f"{rate:,}",
                f"{saved_s(speed):.2f}",
                f"{saved_s(speed, RESIDENT):.2f}",
                f"{reduction(speed):.3f}",
                f"{reduction(speed, RESIDENT):.3f}",
                percent(http.prefix_cache_hit_rate, 1),
                percent(ws.prefix_cache_hit_rate, 1),
            ]
        )
    header = [
        "decode_tps (tokens/s, constant)",
        "saved (s), simple mode",
        "saved (s), residency",
        "e2e reduction, simple mode",
        "e2e reduction, residency",
        "http hit rate",
        "ws hit rate",
    ]
    return table(header, body)


def reprefill() -> str:
    body = []
    for calls in CALLS:
        history = f"workload.tool_calls_per_rollout={calls}"
        row = [f"{calls}"]
        for prefill in PREFILL_TPS:
            speed = f"inference.prefill_tps={float(prefill)!r}"
            row.append(f"{saved_s(history, RESIDENT, speed):.2f}")
        body.append(row)
    header = ["tool calls per rollout"] + [
        f"saved (s) at prefill {p:,} tokens/s" for p in PREFILL_TPS
    ]
    return table(header, body)


@cache
def gap_hit_rate(policy: str, gap_s: float) -> float:
    tools = f'workload.tools=[{{name="tool", weight=1.0, time_s={gap_s!r}, output_tokens=500.0}}]'
    s = scenario(RESIDENT, f'kv_cache.http_routing="{policy}"', tools)
    return simulate(s, Transport.HTTP, GAP_ROLLOUTS).prefix_cache_hit_rate


@cache
def fleet_hit_rate(policy: str, *overrides: str) -> float:
    s = scenario(
        RESIDENT,
        f'kv_cache.ws_routing="{policy}"',
        f"load.agents={FLEET_AGENTS}",
        f"load.duration_s={FLEET_WINDOW_S}",
        *overrides,
    )
    return simulate_fleet(s, Transport.WS, 0).records.prefix_cache_hit_rate


def routing() -> str:
    body = []
    for policy in POLICIES:
        row = [f"`{policy}`"] + [percent(gap_hit_rate(policy, gap), 1) for gap in GAPS_S]
        row.append(percent(fleet_hit_rate(policy), 1))
        body.append(row)
    header = ["routing"] + [f"one agent, {gap:g} s tool gap" for gap in GAPS_S]
    header.append(f"{FLEET_AGENTS} agents (ws, preset tools)")
    return table(header, body)


def meets(s: Scenario, transport: Transport, agents: int) -> bool:
    """The analytic fleet of ``agents`` meets the SLOs on means (with its own hit rate)."""
    (point,) = analytic_points(PRESET, [with_agents(s, agents)], transport)
    return point.stable and point.ttft_s.mean <= TTFT_LIMIT_S and point.e2e_s.mean <= E2E_LIMIT_S


def capacity_agents(s: Scenario, transport: Transport) -> int:
    """The largest population that meets the SLOs (the fleet's latency rises with it)."""
    low, high = 1, 2
    while meets(s, transport, high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if meets(s, transport, middle) else (low, middle)
    return low


@cache
def capacity_row(*overrides: str) -> tuple[int, int]:
    s = scenario(*overrides)
    return capacity_agents(s, Transport.HTTP), capacity_agents(s, Transport.WS)


def capacity() -> str:
    http, ws = capacity_row()
    body = [["simple mode", "-", "-", f"{http:,}", f"{ws:,}", f"{ws / http:.1f}x"]]
    for memory in MEMORY_BYTES:
        http, ws = capacity_row(RESIDENT, f"inference.kv_memory_bytes={memory!r}")
        tokens = memory / scenario().inference.kv_bytes_per_token
        (point,) = analytic_points(
            PRESET,
            [with_agents(scenario(RESIDENT, f"inference.kv_memory_bytes={memory!r}"), ws)],
            Transport.WS,
        )
        body.append(
            [
                f"{memory / 1e9:g}",
                f"{tokens / 1e3:,.0f}k",
                percent(point.prefix_cache_hit_rate, 1),
                f"{http:,}",
                f"{ws:,}",
                f"{ws / http:.1f}x",
            ]
        )
    header = [
        "KV memory per replica (GB)",
        "KV tokens per replica",
        "ws hit rate at its capacity",
        "http agents",
        "ws agents",
        "ws / http",
    ]
    return table(header, body)


SLOW = ("routing", "capacity")
"""Blocks that run fleet simulations and capacity searches (minutes: the capacity table
solves a residency fixed point at every probed population of every memory size)."""

BLOCKS = {
    "amdahl": amdahl,
    "reprefill": reprefill,
    "routing": routing,
    "capacity": capacity,
}


def quotes() -> list[Quote]:
    slow, fast = f"inference.decode_tps={30.0!r}", f"inference.decode_tps={4000.0!r}"
    return [
        (
            "docs/model/workload.md",
            "with residency on it is {} s at 30 tokens/s and {} s at 4,000 tokens/s",
            (f"{saved_s(slow, RESIDENT):.2f}", f"{saved_s(fast, RESIDENT):.2f}"),
        ),
    ]


def main() -> None:
    for name, block in BLOCKS.items():
        print(f"{name}:\n{block()}\n")


if __name__ == "__main__":
    main()
