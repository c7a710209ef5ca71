"""The analytic fleet against the fleet DES, as docs/load.md reports it.

Prints Markdown tables: mean e2e and TTFT by the exact multi-server MVA and by
the DES on ``codex-spark-fleet`` at bottleneck utilizations from 30% to twice
saturation, then the cases where the model is weaker (an inference bottleneck
with a steep batching curve, heavy-tailed tool times).  Each DES point runs a
300 s window after a 60 s warm-up, 2 replications, in two processes (a few
minutes on 2 cores).

    .venv/bin/python docs/scripts/fleet_validation.py
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np

from models.loading import load_scenario
from models.stages import POOLS
from sim.analytic.fleet.demand import fleet_demand
from sim.analytic.fleet.network import closed_curve
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport

REPLICATIONS = 2
WINDOW = ("load.duration_s=300",)
SHARES = (0.3, 0.55, 0.8, 0.95, 1.2, 2.0)
"""Populations as multiples of the model's N*."""
CASES = (
    ("safety pool 32 (the preset)", ()),
    (
        "inference bottleneck, 4 replicas, steep batching (slowdown 0.1)",
        ("capacity.inference_replicas=4", "capacity.decode_slowdown_per_stream=0.1"),
    ),
    (
        "heavy-tailed tests (run_tests time sigma 2.0: mean 11 s, p99 160 s)",
        ('workload.tools[3].time_s={kind="lognormal",median=1.5,sigma=2.0}',),
    ),
)


def run(job: tuple[tuple[str, ...], int, Transport, int]):
    overrides, agents, transport, replication = job
    scenario = load_scenario("codex-spark-fleet", [*overrides, *WINDOW, f"load.agents={agents}"])
    r = simulate_fleet(scenario, transport, replication)
    records = r.records
    utilization = {pool: r.pools[pool].utilization for pool in POOLS}
    return (
        records.e2e_s.mean(),
        records.ttft_sum_s.sum() / records.turns.sum(),
        records.count,
        utilization,
    )


def main() -> None:
    jobs, plans = [], []
    for label, overrides in CASES:
        for transport in (Transport.HTTP, Transport.WS):
            demand = fleet_demand(load_scenario("codex-spark-fleet", overrides), transport)
            shares = SHARES if not overrides else (0.55, 0.8, 1.2)
            for share in shares:
                agents = max(1, int(share * demand.saturation_agents()))
                plans.append((label, overrides, transport, share, agents, demand))
                jobs += [(overrides, agents, transport, r) for r in range(REPLICATIONS)]
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(run, jobs))
    print(
        "| case | transport | agents (x N*) | bottleneck util. model / DES | e2e s model / DES "
        "| error | TTFT ms model / DES | error | DES rollouts |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for index, (label, _, transport, share, agents, demand) in enumerate(plans):
        rows = results[index * REPLICATIONS : (index + 1) * REPLICATIONS]
        e2e = float(np.mean([row[0] for row in rows]))
        ttft = float(np.mean([row[1] for row in rows]))
        count = sum(row[2] for row in rows)
        point = closed_curve(demand, agents)[-1]
        pool, _ = demand.bottleneck()
        des_util = float(np.mean([row[3][pool] for row in rows]))
        print(
            f"| {label} | {transport.value} | {agents:,} ({share:g}) | {pool.value} "
            f"{point.utilization[pool]:.0%} / {des_util:.0%} | {point.e2e_s:.2f} / {e2e:.2f} | "
            f"{point.e2e_s / e2e - 1:+.1%} | {point.ttft_s * 1e3:.0f} / {ttft * 1e3:.0f} | "
            f"{point.ttft_s / ttft - 1:+.1%} | {count:,} |"
        )


if __name__ == "__main__":
    main()
