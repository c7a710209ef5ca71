"""What carries the capacity headline: the ws / http capacity ratio against the pool sizes.

Prints two Markdown tables at the README's SLOs (TTFT p95 <= 1 s, e2e p95 <= 40 s,
``load.duration_s = 120``): the analytic model's capacity, N* and bottleneck of each
transport over the safety pool (16 to 128 workers) and the inference replicas (8 to
64, 16 streams each); then DES spot checks (the capacity search, both transports, on
two local processes: about a minute each).

    .venv/bin/python docs/scripts/capacity_sensitivity.py
"""

from __future__ import annotations

import time

from models.loading import load_scenario
from sim.capacity.estimate import SloEstimate
from sim.capacity.objectives import Slo, SloMetric
from sim.capacity.search import search_all
from sim.sweep.workers import replication_workers
from sim.turn.transports import Transport

SLOS = [Slo(SloMetric.TTFT_P95_S, 1.0), Slo(SloMetric.E2E_P95_S, 40.0)]
BASE = ("load.duration_s=120",)
CONFIGS = (
    *((f"safety {n}", (f"capacity.safety_workers={n}",)) for n in (16, 32, 64, 128)),
    *((f"replicas {n}", (f"capacity.inference_replicas={n}",)) for n in (8, 16, 64)),
    ("safety 128, replicas 8", ("capacity.safety_workers=128", "capacity.inference_replicas=8")),
    ("safety 128, API 32", ("capacity.safety_workers=128", "capacity.api_workers=32")),
)
SPOT_CHECKS = ("safety 64", "safety 128", "replicas 8")


def analytic_row(label: str, overrides: tuple[str, ...]) -> tuple[int, int]:
    scenario = load_scenario("codex-spark", [*BASE, *overrides])
    cells, capacities = [], []
    for transport in (Transport.HTTP, Transport.WS):
        estimate = SloEstimate(scenario, transport)
        pool, _ = estimate.demand.bottleneck()
        capacity = estimate.capacity(SLOS, 100_000)
        capacities.append(capacity)
        cells += [f"{capacity:,}", f"{estimate.saturation_agents:,.0f} ({pool.value})"]
    ratio = capacities[1] / capacities[0] if capacities[0] else float("nan")
    print(f"| {label} | {' | '.join(cells)} | {ratio:.1f} |")
    return capacities[0], capacities[1]


def main() -> None:
    print(
        "| cell | http capacity | http N* (bottleneck) | ws capacity | ws N* (bottleneck) | ratio |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    analytic = {label: analytic_row(label, overrides) for label, overrides in CONFIGS}
    print()
    print("| cell | http DES (95% CI) | http model | ws DES (95% CI) | ws model | ratio | wall s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    with replication_workers(None, None) as pool:
        for label in SPOT_CHECKS:
            overrides = dict(CONFIGS)[label]
            scenario = load_scenario("codex-spark", [*BASE, *overrides])
            started = time.perf_counter()
            found = search_all(
                scenario,
                (Transport.HTTP, Transport.WS),
                SLOS,
                100_000,
                pool.executor,
                pool.parallel,
            )
            wall_s = time.perf_counter() - started
            cells = []
            for transport, model in zip(
                (Transport.HTTP, Transport.WS), analytic[label], strict=True
            ):
                entry = found[transport]
                low, high = entry.ci95_agents
                cells += [
                    f"{entry.capacity_agents:,} ({low:,}-{high if high is None else f'{high:,}'})",
                    f"{model:,}",
                ]
            ratio = found[Transport.WS].capacity_agents / found[Transport.HTTP].capacity_agents
            print(f"| {label} | {' | '.join(cells)} | {ratio:.1f} | {wall_s:.0f} |")


if __name__ == "__main__":
    main()
