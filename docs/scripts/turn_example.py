"""One expected turn, scope and stage by stage, under every transport.

Turn index 20 of a codex-spark rollout with 30 tool calls, at expected
workload values (the analytic engine's inputs); render cache hit at its
probability.  Prints two Markdown tables for docs/model.md: the scope of work
and the seconds per stage.

    .venv/bin/python docs/scripts/turn_example.py
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.costs import Work, stage_costs
from models.loading import load_scenario
from models.stages import STAGES
from sim.engine.columns import column_form
from sim.engine.expected_draws import expected_draws
from sim.engine.layout import expected_turns
from sim.engine.transports import Transport, turn_work

PRESET = "codex-spark"
CALLS = 30
TURN = 20

SCOPE = (
    ("items sent", "items_sent"),
    ("tokens sent", "tokens_sent"),
    ("items validated", "items_validated"),
    ("state tokens loaded from storage", "store_state_tokens"),
    ("in-memory state loads", "memory_loads"),
    ("tokens rendered", "tokens_rendered"),
    ("full route / cached route", ("route_full", "route_cached")),
    ("hop runs", "hop_runs"),
    ("tokens classified", "tokens_classified"),
    ("prompt tokens prefilled (uncached)", "prompt_tokens_uncached"),
    ("post runs / blocking", ("post_runs", "post_blocking")),
    ("connect (http / ws)", ("connect_http", "connect_ws")),
    ("failed continuation", "recover"),
)


def columns() -> list[tuple[str, Work, Any]]:
    """(label, work, scenario's column form) of the turn under each transport and variant."""
    by_store = {}
    for store in ("true", "false"):
        scenario = column_form(
            [
                load_scenario(
                    PRESET,
                    [f"workload.tool_calls_per_rollout={CALLS}", f"connection.store={store}"],
                )
            ]
        )
        turns = expected_turns(scenario, expected_draws(scenario), np.array([TURN]), np.zeros(1))
        by_store[store] = (scenario, {t: turn_work(scenario, t, turns) for t in Transport})
    scenario, work = by_store["true"]
    no_store, work_no_store = by_store["false"]
    return [
        ("`http` warm", work[Transport.HTTP][1], scenario),
        ("`http` cold", work[Transport.HTTP][0], scenario),
        ("`http-full` warm", work[Transport.HTTP_FULL][1], scenario),
        ("`ws` warm", work[Transport.WS][1], scenario),
        ("`ws` cold, store=true", work[Transport.WS][0], scenario),
        ("`ws` cold, store=false", work_no_store[Transport.WS][0], no_store),
        ("`ws-append` warm", work[Transport.WS_APPEND][1], scenario),
    ]


def value(per_turn: np.ndarray) -> float:
    """The turn's value from an array over (points, turns) of one point and one turn."""
    return float(np.broadcast_to(per_turn, (1, 1))[0, 0])


def cell(work: Work, name: str | tuple[str, str]) -> str:
    if isinstance(name, tuple):
        return " / ".join(f"{value(getattr(work, n)):g}" for n in name)
    return f"{value(getattr(work, name)):,.0f}"


def main() -> None:
    cols = columns()
    header = "| quantity | " + " | ".join(label for label, _, _ in cols) + " |"
    rule = "| --- " * (len(cols) + 1) + "|"
    print(header)
    print(rule)
    for label, name in SCOPE:
        print(f"| {label} | " + " | ".join(cell(work, name) for _, work, _ in cols) + " |")
    print()
    print(header)
    print(rule)
    costs = [stage_costs(scenario, work) for _, work, scenario in cols]
    for stage in STAGES:
        values = [value(c.stage_s[stage]) * 1000 for c in costs]
        print(f"| `{stage.value}` (ms) | " + " | ".join(f"{v:.1f}" for v in values) + " |")
    rows = (
        ("**turn** (ms)", lambda c: c.turn_s),
        ("TTFT (ms)", lambda c: c.ttft_s),
        ("API work (ms)", lambda c: c.api_cpu_s),
        ("safety work (ms)", lambda c: c.safety_cpu_s),
        ("post overlapped (ms)", lambda c: c.post_overlapped_s),
    )
    for label, metric in rows:
        print(f"| {label} | " + " | ".join(f"{value(metric(c)) * 1000:.1f}" for c in costs) + " |")


if __name__ == "__main__":
    main()
