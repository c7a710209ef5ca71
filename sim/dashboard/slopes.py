"""How API work per rollout grows with the tool calls: the local log-log slope of the curve.

Per-request HTTP rebuilds the whole history every turn, so its work per rollout
has a part that grows with the square of the turns; every request also carries
the fixed instructions and tool definitions, a part linear in the turns.  The
slope is therefore well below 2 over realistic rollouts and tends to 2 only as
rollouts grow long; WebSocket mode's stays close to 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from models.scenario import Scenario
from sim.analytic.agent.engine import expect
from sim.dashboard.rescale import with_tool_calls
from sim.turn.transports import Transport

SLOPE_CALLS = (20, 80)
"""Where the caption measures the slope: the range of the scaling view's realistic rollouts."""
STEP = 1.2
"""The slope at n calls is measured between n / STEP and n x STEP calls."""


def local_slope(scenario: Scenario, transport: Transport, calls: int) -> float:
    """d log(API work per rollout) / d log(tool calls) at ``calls`` (analytic engine)."""
    low, high = round(calls / STEP), round(calls * STEP)
    work = [expect(with_tool_calls(scenario, n), transport).api_cpu_s for n in (low, high)]
    return math.log(work[1] / work[0]) / math.log(high / low)


def slopes(
    scenario: Scenario, transports: Sequence[Transport], at: tuple[int, ...] = SLOPE_CALLS
) -> dict[str, tuple[float, ...]]:
    """Transport name -> its local slope at each number of calls in ``at``."""
    return {t.value: tuple(local_slope(scenario, t, n) for n in at) for t in transports}


def slope_caption(scenario: Scenario, transports: Sequence[Transport]) -> str:
    """The scaling view's caption: the story and the measured slopes."""
    low, high = SLOPE_CALLS
    measured = "; ".join(
        f"{name} {a:.2f} at {low} calls, {b:.2f} at {high}"
        for name, (a, b) in slopes(scenario, transports).items()
    )
    return (
        "Per-request HTTP rebuilds the whole history every turn, so its API work per "
        "rollout has a part that grows with the square of the turns; each request also "
        "carries the fixed instructions and tool definitions, a part that grows linearly, "
        "so the log-log slope is well below 2 over realistic rollouts and tends to 2 only "
        "as they grow long. WebSocket mode processes only the new input: a slope close to "
        f"1. Local log-log slope of API work: {measured}."
    )
