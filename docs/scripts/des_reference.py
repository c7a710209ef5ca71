"""DES reference runs the analytic fleet is measured against, kept in a data file.

The fleet DES takes seconds to minutes per case; the analytic fleet takes
milliseconds.  So the DES's per-replication statistics of each case are run
once here and written to ``tests/data/des_reference.json``; the tests
(``tests/test_analytic_accuracy.py``) and the docs tables
(``docs/scripts/accuracy.py``) compare the analytic fleet with them, and a
slow test runs one replication again to check that the file is current.
Rerun after any change to the DES (sequential, one process; about ten
minutes of CPU in all):

    .venv/bin/python -m docs.scripts.des_reference            # every group
    .venv/bin/python -m docs.scripts.des_reference --only knee
    .venv/bin/python -m docs.scripts.des_reference --case "ttl-pin affinity 120 GB"

Groups:

- ``residency``: 200 codex-spark agents over WebSocket with KV residency,
  replica memory from 5 to 120 GB, LRU and ttl-pin eviction, every routing
  policy (200 s window after the 60 s warm-up; under ttl-pin 1,200 s after
  4,800 s: see ``PINNED_WINDOW``).
- ``affinity``: every routing policy on a fleet whose inference replicas are
  the bottleneck (4 replicas of 4 streams, slowdown 0.1 per stream, at N*): the
  hit rate a policy buys against the waiting at its replicas.
- ``knee``: codex-spark over HTTP (the classifiers the bottleneck) from 0.5 to
  1.5 times the saturation population N*, and an inference bottleneck (4
  replicas, slowdown 0.1 per stream) over WebSocket (300 s windows).
- ``rate-limit``: 1 to 10 agents at a request limit of 60 a minute and 40 at
  900 a minute, over WebSocket and HTTP, and a token limit (long windows: a
  lone agent finishes few rollouts in 300 s).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.progress import Progress

from models.loading import load_scenario
from models.stages import POOLS, STAGE_COLUMN, Pool, Stage
from sim.analytic.fleet.demand import fleet_demand
from sim.des.runners import simulate_fleet
from sim.turn.transports import Transport

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "des_reference.json"
PRESET = "codex-spark"
RESIDENT = ("kv_cache.residency=true", "load.agents=200", "load.duration_s=200")
RESIDENCY_REPLICATIONS = 4
PINNED_WINDOW = ("load.warmup_s=4800", "load.duration_s=1200")
"""ttl-pin's warm-up, 16 times the preset's time-to-live, and a longer window.  The agents
start within 30 s, so the last writes of their first rollouts are pinned together and
expire together a time-to-live later; the room they leave is taken by the writes of that
moment, which expire together again: the memory's contents come in waves one
time-to-live apart that fade only over some 15 of them.  While they last, fewer writes are
kept (the history found per 600 s window at 120 GB, four runs of 9,900 s: 23.8% at
1,200-1,800 s, 25.9% at 3,600-4,800 s, 26.6% from 4,800 s to 9,600 s; at 60 GB, one
replication: 15-16% at 600-1,800 s, 18% from 4,200 s)."""
KNEE_REPLICATIONS = 6
KNEE_SHARES = (0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5)
STEEP = ("capacity.inference_replicas=4", "capacity.decode_slowdown_per_stream=0.1")
LIMIT_REPLICATIONS = 5


@dataclass(frozen=True)
class Case:
    """One DES reference point: a spec, its overrides and what is kept per replication."""

    group: str
    name: str
    transport: str
    overrides: tuple[str, ...]
    replications: int
    preset: str = PRESET
    values: dict[str, list[float]] = field(default_factory=dict)


def memory(gigabytes: float) -> str:
    return f"inference.kv_memory_bytes={gigabytes * 1e9!r}"


def residency_cases() -> list[Case]:
    cases = []
    for gigabytes in (5, 10, 15, 20, 30, 60, 120):
        cases.append(_resident(f"lru affinity {gigabytes} GB", gigabytes, "affinity"))
    for gigabytes in (10, 20, 60, 120):
        cases.append(_resident(f"ttl-pin affinity {gigabytes} GB", gigabytes, "affinity", True))
    for policy in ("round-robin", "random", "least-loaded", "consistent-hash"):
        for gigabytes in (20, 120):
            cases.append(_resident(f"lru {policy} {gigabytes} GB", gigabytes, policy))
    return cases


def _resident(name: str, gigabytes: float, policy: str, pinned: bool = False) -> Case:
    overrides = [*RESIDENT, memory(gigabytes), f'kv_cache.ws_routing="{policy}"']
    if pinned:
        # Pinned entries first expire a time-to-live (300 s) into the run and then in
        # waves a time-to-live apart: a 60 s warm-up measures the memory filling.
        overrides += ['kv_cache.eviction="ttl-pin"', *PINNED_WINDOW]
    return Case("residency", name, "ws", tuple(overrides), RESIDENCY_REPLICATIONS)


def knee_cases() -> list[Case]:
    cases = []
    for label, transport, extra in (("classifiers", "http", ()), ("steep batching", "ws", STEEP)):
        base = load_scenario(PRESET, list(extra))
        saturation = fleet_demand(base, Transport(transport)).saturation_agents()
        for share in KNEE_SHARES:
            agents = max(1, round(share * saturation))
            cases.append(
                Case(
                    "knee",
                    f"{label} {share:g} N*",
                    transport,
                    (*extra, f"load.agents={agents}"),
                    KNEE_REPLICATIONS,
                )
            )
    return cases


def rate_limit_cases() -> list[Case]:
    cases = []
    for agents, per_minute in ((1, 60), (2, 60), (5, 60), (10, 60), (40, 900)):
        window, warmup = (6000, 60) if agents <= 2 else (2000, 300) if agents <= 10 else (600, 120)
        for transport in ("ws", "http"):
            cases.append(
                Case(
                    "rate-limit",
                    f"{agents} agents, {per_minute} requests/min, {transport}",
                    transport,
                    (
                        f"load.agents={agents}",
                        f"load.duration_s={window}",
                        f"load.warmup_s={warmup}",
                        f"rate_limit.requests_per_minute={per_minute}",
                    ),
                    LIMIT_REPLICATIONS,
                )
            )
    for agents in (1, 10):
        cases.append(
            Case(
                "rate-limit",
                f"{agents} agents, 1.2M tokens/min, ws",
                "ws",
                (
                    f"load.agents={agents}",
                    "load.duration_s=3000",
                    "load.warmup_s=300",
                    "rate_limit.tokens_per_minute=1.2e6",
                ),
                LIMIT_REPLICATIONS,
            )
        )
    return cases


def affinity_cases() -> list[Case]:
    """Every policy on a fleet whose inference replicas are the bottleneck and queue (4
    replicas of 4 streams, slowdown 0.1 per stream), at its saturation population."""
    fleet = (*STEEP, "capacity.streams_per_replica=4")
    base = load_scenario(PRESET, list(fleet))
    agents = round(fleet_demand(base, Transport.WS).saturation_agents())
    return [
        Case(
            "affinity",
            f"{policy}, 4 replicas of 4 streams",
            "ws",
            (
                *fleet,
                "kv_cache.residency=true",
                f"load.agents={agents}",
                f'kv_cache.ws_routing="{policy}"',
            ),
            RESIDENCY_REPLICATIONS,
        )
        for policy in ("affinity", "consistent-hash", "least-loaded", "random", "round-robin")
    ]


GROUPS = {
    "residency": residency_cases,
    "affinity": affinity_cases,
    "knee": knee_cases,
    "rate-limit": rate_limit_cases,
}


def measure(case: Case, replication: int) -> dict[str, float]:
    """One replication's statistics of ``case``."""
    scenario = load_scenario(case.preset, list(case.overrides))
    r = simulate_fleet(scenario, Transport(case.transport), replication)
    records = r.records
    turns = float(records.turns.sum())
    retry = records.stage_s[:, STAGE_COLUMN[Stage.RETRY]].sum()
    return {
        "e2e_s": float(records.e2e_s.mean()),
        "ttft_s": float(records.ttft_sum_s.sum() / turns),
        "hit_rate": records.prefix_cache_hit_rate,
        "refused_s_per_turn": float(retry / turns),
        "inference_wait_s_per_turn": float(
            records.pool_wait_s[:, POOLS.index(Pool.INFERENCE)].sum() / turns
        ),
        "rollouts": float(records.count),
    }


def load() -> dict[str, Any]:
    """The stored reference cases by name."""
    if not DATA.exists():
        return {}
    return {case["name"]: case for case in json.loads(DATA.read_text())["cases"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(GROUPS), action="append")
    parser.add_argument("--case", action="append", help="one case by name (repeatable)")
    args = parser.parse_args()
    stored = load()
    cases = [case for name in args.only or GROUPS for case in GROUPS[name]()]
    if args.case:
        unknown = set(args.case) - {case.name for case in cases}
        if unknown:
            parser.error(f"--case: no such case {sorted(unknown)}")
        cases = [case for case in cases if case.name in args.case]
    # Stored in the order the groups define their cases, so each table lists them so.
    every = [case.name for name in GROUPS for case in GROUPS[name]()]
    position = {name: i for i, name in enumerate(every)}
    with Progress() as progress:
        task = progress.add_task("DES reference", total=sum(c.replications for c in cases))
        for case in cases:
            progress.update(task, description=case.name)
            values: dict[str, list[float]] = {}
            for replication in range(case.replications):
                for key, value in measure(case, replication).items():
                    values.setdefault(key, []).append(value)
                progress.advance(task)
            stored[case.name] = asdict(Case(**{**asdict(case), "values": values}))
            rows = sorted(stored.values(), key=lambda c: position.get(c["name"], len(position)))
            DATA.write_text(json.dumps({"cases": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
