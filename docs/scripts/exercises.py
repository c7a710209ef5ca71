"""The answers of docs/exercises.md, recomputed with the analytic engine.

Each answer's numbers come from the commands the exercise gives (``--engine
analytic`` with the stated ``--set``), formatted as the page quotes them.

    .venv/bin/python -m docs.scripts.exercises
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, percent, show
from models.loading import load_scenario
from models.stages import STAGES, Stage
from sim.engine.analytic import Expectation, expect
from sim.engine.transports import Transport

PAGE = "docs/exercises.md"


@cache
def expected(source: str, transport: Transport, *overrides: str) -> Expectation:
    return expect(load_scenario(source, list(overrides)), transport)


def stage_s(expectation: Expectation, *stages: Stage) -> float:
    return float(sum(expectation.stage_s[STAGES.index(stage)] for stage in stages))


def e2e_reduction(*overrides: str) -> str:
    http = expected("codex-spark", Transport.HTTP, *overrides)
    ws = expected("codex-spark", Transport.WS, *overrides)
    return percent(1.0 - ws.e2e_s / http.e2e_s, 1)


def amdahl() -> Quote:
    """Exercise 1: the reduction at each quoted decode speed."""
    return (
        PAGE,
        "reduction is {} at 250 tokens/s and {} at 300 tokens/s, against {} at 65 tokens/s "
        "(a GPU flagship) and {} at 4,000 tokens/s.",
        tuple(e2e_reduction(f"inference.decode_tps={tps}") for tps in (250, 300, 65, 4000)),
    )


def quadratic() -> Quote:
    """Exercise 2: render plus safety per rollout at 20 and 40 tool calls, and the factor."""
    values = []
    for transport in (Transport.HTTP, Transport.WS):
        at_20, at_40 = (
            stage_s(
                expected("codex-spark", transport, f"workload.tool_calls_per_rollout={n}"),
                Stage.RENDER,
                Stage.SAFETY,
            )
            for n in (20, 40)
        )
        values += [f"{at_20:.2f}", f"{at_40:.2f}", f"{at_40 / at_20:.2f}"]
    return (
        PAGE,
        "Over HTTP it grows from {} s to {} s per rollout, a factor of {}; over WebSocket "
        "from {} s to {} s, a factor of {}.",
        tuple(values),
    )


def sprint() -> Quote:
    """Exercise 3: TTFT before and after the sprint, and the saving of each change per turn."""
    before = expected("responses-2025", Transport.HTTP)
    after = expected("codex-spark", Transport.HTTP)
    saved = [
        f"{(stage_s(before, stage) - stage_s(after, stage)) / before.turns * 1e3:.1f}"
        for stage in (Stage.HOPS, Stage.SAFETY, Stage.ROUTE, Stage.RENDER)
    ]
    return (
        PAGE,
        "Mean TTFT falls from {} ms to {} ms per turn, a {} reduction (the published figure "
        'is "close to 45%"). Per turn, removing the hops saves {} ms, the faster classifiers '
        "{} ms, the configuration cache {} ms and the render cache {} ms.",
        (
            f"{before.ttft_mean_s * 1e3:.0f}",
            f"{after.ttft_mean_s * 1e3:.0f}",
            percent(1 - after.ttft_mean_s / before.ttft_mean_s, 1),
            *saved,
        ),
    )


def cache_loss() -> Quote:
    """Exercise 4: store=true against store=false at 120 drops per hour."""
    drops = "connection.ws_drops_per_hour=120"
    stored = expected("codex-spark", Transport.WS, drops, "connection.store=true")
    resent = expected("codex-spark", Transport.WS, drops, "connection.store=false")
    return (
        PAGE,
        "Almost nothing: {} s against {} s per rollout. A rollout opens {} connections on "
        "average, so about {} turns pay the failed attempt (the `recover` stage, {} s per "
        "rollout in all)",
        (
            f"{stored.e2e_s:.3f}",
            f"{resent.e2e_s:.3f}",
            f"{resent.cold_turns:.2f}",
            f"{resent.cold_turns - 1:.2f}",
            f"{stage_s(resent, Stage.RECOVER):.3f}",
        ),
    )


def distance() -> Quote:
    """Exercise 5: the reduction at each quoted round-trip time."""
    return (
        PAGE,
        "the reduction is {} at 5 ms, {} at 30 ms (the preset) and {} at 150 ms.",
        tuple(e2e_reduction(f"network.rtt_ms={rtt}") for rtt in (5, 30, 150)),
    )


def quotes() -> list[Quote]:
    return [amdahl(), quadratic(), sprint(), cache_loss(), distance()]


if __name__ == "__main__":
    show(quotes())
