"""What one widget change of the dashboard costs, against one ``expect()`` in the same process.

Run ``python -m benchmarks.dashboard_recompute [--repeats N]``.  A change of a
main knob (here the round-trip time) applies the knob, validates the scenario
and recomputes every analytic view with cold caches: the budget and the
reductions, the Amdahl curve and the scaling curves.  The one-rollout timeline
is two single-rollout DES runs and is reported on its own line.  Times are
medians over the repeats; the ratio to ``expect()`` makes the figure comparable
across machines.  Goal: the analytic recompute well under 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from itertools import cycle

from models.loading import load_scenario
from sim.analytic.agent.engine import expect
from sim.dashboard.data import (
    DEFAULT_TRANSPORTS,
    amdahl_frame,
    amdahl_point,
    budget_frame,
    evaluate,
    rollout_frame,
    scaling_frame,
)
from sim.dashboard.knobs import KNOBS, apply
from sim.dashboard.rescale import decode_tps
from sim.dashboard.slopes import slopes
from sim.turn.transports import Transport

PRESET = "codex-spark"
GOAL_MS = 100.0
RTT = next(knob for knob in KNOBS if knob.key == "network.rtt_ms")


def median_s(work: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``work`` over ``repeats`` calls, after one warm-up call."""
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed calls per measurement")
    repeats = parser.parse_args().repeats

    scenario = load_scenario(PRESET)
    table = scenario.model_dump(mode="json", by_alias=True)
    rtts_ms = cycle([20.0, 40.0, 60.0])

    def analytic_change() -> None:
        _, moved = apply(table, scenario, RTT, next(rtts_ms))
        results = evaluate(moved, DEFAULT_TRANSPORTS)
        budget_frame(results)
        amdahl_frame(moved, DEFAULT_TRANSPORTS)
        amdahl_point(results, decode_tps(moved))
        scaling_frame(moved, DEFAULT_TRANSPORTS)
        slopes(moved, DEFAULT_TRANSPORTS)

    def timeline() -> None:
        rollout_frame(scenario, DEFAULT_TRANSPORTS, 0)

    reference_s = median_s(lambda: expect(scenario, Transport.HTTP), repeats * 10)
    change_s = median_s(analytic_change, repeats)
    timeline_s = median_s(timeline, repeats)
    verdict = "meets" if change_s * 1000 < GOAL_MS else "misses"
    print(f"dashboard recompute on {PRESET}, transports http and ws, median of {repeats}")
    print(f"  one expect() call                 {reference_s * 1000:8.2f} ms")
    print(
        f"  analytic recompute, one knob      {change_s * 1000:8.2f} ms"
        f"  = {change_s / reference_s:5.0f} x expect()  ({verdict} the {GOAL_MS:.0f} ms goal)"
    )
    print(
        f"  one-rollout timeline (DES)        {timeline_s * 1000:8.2f} ms"
        f"  = {timeline_s / reference_s:5.0f} x expect()"
    )


if __name__ == "__main__":
    main()
