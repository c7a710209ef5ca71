"""One expected turn, scope and stage by stage, under every transport.

Turn index 20 of a codex-spark rollout with 30 tool calls, at expected
workload values (the analytic engine's inputs); render cache hit at its
probability.  The two tables of docs/model/transports.md (the scope of work and the
seconds per stage), and the numbers its prose, the stage table of docs/model/turn.md and
docs/calibration.md read from them.

    .venv/bin/python -m docs.scripts.turn_example
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from docs.scripts.markdown import Quote, table
from models.costs import TurnCosts, stage_costs
from models.loading import load_scenario
from models.stages import STAGES, Stage
from models.work import Work
from sim.analytic.agent.columns import column_form
from sim.analytic.agent.expected_draws import expected_draws
from sim.analytic.agent.layout import expected_turns
from sim.turn.transports import Transport, turn_work

PRESET = "codex-spark"
CALLS = 30
TURN = 20
TURN_PAGE, TRANSPORTS_PAGE = "docs/model/turn.md", "docs/model/transports.md"
CALIBRATION = "docs/calibration.md"

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
        overrides = [f"workload.tool_calls_per_rollout={CALLS}", f"connection.store={store}"]
        scenario = column_form([load_scenario(PRESET, overrides)])
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


@cache
def costs() -> list[tuple[str, Work, TurnCosts]]:
    """(label, work, costs) of the turn under each transport and variant."""
    return [(label, work, stage_costs(scenario, work)) for label, work, scenario in columns()]


def scope() -> str:
    header = ["quantity", *(label for label, _, _ in costs())]
    body = [[label, *(cell(work, name) for _, work, _ in costs())] for label, name in SCOPE]
    return table(header, body)


def seconds() -> str:
    header = ["quantity", *(label for label, _, _ in costs())]
    body = [
        [f"`{stage.value}` (ms)", *(f"{value(c.stage_s[stage]) * 1000:.1f}" for _, _, c in costs())]
        for stage in STAGES
    ]
    rows = (
        ("**turn** (ms)", lambda c: c.turn_s),
        ("TTFT (ms)", lambda c: c.ttft_s),
        ("API work (ms)", lambda c: c.api_cpu_s),
        ("safety work (ms)", lambda c: c.safety_cpu_s),
        ("post overlapped (ms)", lambda c: c.post_overlapped_s),
    )
    for label, metric in rows:
        body.append([label, *(f"{value(metric(c)) * 1000:.1f}" for _, _, c in costs())])
    return table(header, body)


BLOCKS = {"scope": scope, "seconds": seconds}


def ms(label: str, stage: Stage) -> float:
    """Seconds of one stage in one column of the tables, in ms."""
    (found,) = [c for name, _, c in costs() if name == label]
    return value(found.stage_s[stage]) * 1000


def quotes() -> list[Quote]:
    http, ws = "`http` warm", "`ws` warm"
    saved = {stage: ms(http, stage) - ms(ws, stage) for stage in STAGES}
    turn_ms = {label: value(c.turn_s) * 1000 for label, _, c in costs()}
    (http_work,) = [work for name, work, _ in costs() if name == http]
    connect_http, connect_ws = (
        ms("`http` cold", Stage.CONNECT),
        ms("`ws` cold, store=true", Stage.CONNECT),
    )
    column = [
        (TURN_PAGE, f"| `{stage.value}` |{{...}}| {{}} ms |", (f"{ms(http, stage):.1f}",))
        for stage in STAGES
        if ms(http, stage) > 0
    ]
    return [
        *column,
        (
            TURN_PAGE,
            "| `connect` |{...}| 0 ({} ms cold; {} ms for a WebSocket) |",
            (f"{connect_http:.1f}", f"{connect_ws:.1f}"),
        ),
        (
            TURN_PAGE,
            "| `recover` |{...}| 0 ({} ms when it happens) |",
            (f"{ms('`ws` cold, store=false', Stage.RECOVER):.1f}",),
        ),
        (
            TRANSPORTS_PAGE,
            "a warm `ws` turn costs {} ms against {} ms over `http`, of which {} ms is the "
            "blocking safety classifiers re-reading {} tokens, {} ms rendering, {} ms loading "
            "state, {} ms validation and {} ms post-inference work",
            (
                f"{turn_ms[ws]:.0f}",
                f"{turn_ms[http]:.0f}",
                f"{saved[Stage.SAFETY]:.0f}",
                f"{value(http_work.tokens_classified):,.0f}",
                *(f"{saved[s]:.0f}" for s in (Stage.RENDER, Stage.STATE_LOAD, Stage.VALIDATE)),
                f"{saved[Stage.POST]:.0f}",
            ),
        ),
        (
            CALIBRATION,
            "the upgrade handshake ({} ms against {} ms, once per rollout)",
            (f"{connect_ws:.1f}", f"{connect_http:.1f}"),
        ),
        (CALIBRATION, "since a reconnect costs {} ms.", (f"{connect_http:.0f}",)),
    ]


def main() -> None:
    print(scope())
    print()
    print(seconds())


if __name__ == "__main__":
    main()
