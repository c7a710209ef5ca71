"""Connections kept across an agent's rollouts: connections per agent-hour, DES against
renewal theory and the analytic engine, as docs/model/analytic.md and
docs/model/transports.md quote them.

codex-spark with ``connection.reuse_across_rollouts = true``; one agent's
sessions of 1,024 rollouts (8 of them) and a closed fleet of 40 agents.

    .venv/bin/python -m docs.scripts.sessions
"""

from __future__ import annotations

import math

import numpy as np

from docs.scripts.markdown import Quote, show, table
from models.loading import load_scenario
from models.scenario import Scenario
from sim.analysis.stats import mean_ci95
from sim.analytic.agent.engine import expect
from sim.des.runners import simulate, simulate_fleet
from sim.turn.transports import Transport

PRESET = "codex-spark"
REUSE = "connection.reuse_across_rollouts=true"
ROLLOUTS = 8192
FLEET = ("load.agents=40", "load.duration_s=1200")
POINTS = (
    (Transport.WS, 3600.0, 0.5, ()),
    (Transport.WS, 3600.0, 30.0, ()),
    (Transport.WS, 600.0, 6.0, ()),
    (Transport.WS, 120.0, 0.0, ()),
    (Transport.WS, 60.0, 0.0, ()),
    (Transport.WS, 30.0, 0.0, ()),
    (Transport.WS, 120.0, 30.0, FLEET),
    (Transport.HTTP, 3600.0, 0.5, ()),
)
"""(transport, lifetime s, drops per hour, fleet overrides or () for one agent)."""


def point(lifetime_s: float, drops_per_hour: float, extra: tuple[str, ...]) -> Scenario:
    return load_scenario(
        PRESET,
        [
            REUSE,
            f"connection.ws_lifetime_s={lifetime_s}",
            f"connection.ws_drops_per_hour={drops_per_hour}",
            *extra,
        ],
    )


def renewal_per_hour(lifetime_s: float, drops_per_hour: float) -> float:
    """3,600 / E[min(L, D)]: the connections a session opens per hour, late notice aside."""
    if drops_per_hour == 0:
        return 3600.0 / lifetime_s
    rate = drops_per_hour / 3600.0
    return 3600.0 * rate / -math.expm1(-rate * lifetime_s)


def drawn(s: Scenario, transport: Transport, fleet: bool) -> tuple[np.ndarray, float]:
    """Connections per rollout and the agent-hours they took (rollouts plus think time)."""
    think_s = s.load.think_time_s.mean
    if fleet:
        records = [simulate_fleet(s, transport, r).records for r in range(2)]
        cold = np.concatenate([r.cold_turns for r in records])
        e2e = np.concatenate([r.e2e_s for r in records])
    else:
        r = simulate(s, transport, ROLLOUTS)
        cold, e2e = r.cold_turns, r.e2e_s
    return cold, (e2e.sum() + think_s * e2e.size) / 3600.0


def per_agent_hour() -> str:
    body = []
    for transport, lifetime_s, drops_per_hour, extra in POINTS:
        s = point(lifetime_s, drops_per_hour, extra)
        cold, hours = drawn(s, transport, bool(extra))
        low, high = mean_ci95(cold)
        e = expect(s, transport)
        analytic_hour = e.cold_turns * 3600.0 / (e.e2e_s + s.load.think_time_s.mean)
        websocket = transport is Transport.WS
        renewal = f"{renewal_per_hour(lifetime_s, drops_per_hour):.2f}" if websocket else "-"
        body.append(
            [
                transport.value,
                "fleet of 40" if extra else "one agent",
                f"{lifetime_s:g}",
                f"{drops_per_hour:g}",
                f"{cold.mean():.4f} [{low:.4f}, {high:.4f}]",
                f"{e.cold_turns:.4f}",
                f"{cold.sum() / hours:.2f}",
                renewal,
                f"{analytic_hour:.2f}",
            ]
        )
    header = [
        "transport",
        "who",
        "lifetime s",
        "drops per hour",
        "connections per rollout, DES (95% CI)",
        "analytic",
        "per agent-hour, DES",
        "renewal 1 / E[min(L, D)]",
        "analytic",
    ]
    return table(header, body)


def quotes() -> list[Quote]:
    alone = load_scenario(PRESET)
    kept = load_scenario(PRESET, [REUSE])
    saved = {t: expect(alone, t).e2e_s - expect(kept, t).e2e_s for t in Transport}
    return [
        (
            "docs/model/transports.md",
            "At codex-spark keeping the connection saves {} s per rollout over `ws` and {} s "
            "over `http`",
            (f"{saved[Transport.WS]:.3f}", f"{saved[Transport.HTTP]:.3f}"),
        )
    ]


BLOCKS = {"sessions": per_agent_hour}

if __name__ == "__main__":
    for name, block in BLOCKS.items():
        print(f"{name}:\n{block()}\n")
    show(quotes())
