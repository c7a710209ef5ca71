"""The analytic fleet against the stored DES reference runs (docs/load.md,
docs/model/analytic.md).

The DES side is ``tests/data/des_reference.json`` (``docs/scripts/des_reference.py``
writes it); the analytic side is computed here, in milliseconds per point.
Each table gives the DES's mean and 95% interval across its replications
(Student t), the analytic value and the error; ``tests/test_analytic_accuracy.py``
asserts the same comparisons.

    .venv/bin/python -m docs.scripts.accuracy
"""

from __future__ import annotations

from functools import cache

import numpy as np

from docs.scripts.des_reference import load
from docs.scripts.markdown import Quote, table
from models.loading import load_scenario
from models.stages import Pool
from sim.analysis.fleet_analytic import analytic_points
from sim.analysis.results import RunResult
from sim.analysis.stats import t_half_width
from sim.analytic.agent.expectations import BOUNDS as AGENT_BOUNDS
from sim.analytic.fleet.approximations import BOUNDS as FLEET_BOUNDS
from sim.turn.transports import Transport

HIT_RATE_TOLERANCE = 0.02
"""The bound on the analytic fleet's hit rate against the DES (absolute)."""


def interval(values: list[float]) -> tuple[float, float]:
    """The mean and the 95% half-width (Student t) across replications."""
    x = np.asarray(values, dtype=float)
    half = float(t_half_width(x.std(ddof=1), x.size))
    return float(x.mean()), half


def cases(group: str) -> list[dict]:
    """The stored reference cases of one group, in the order they were run."""
    return [case for case in load().values() if case["group"] == group]


@cache
def analytic(name: str) -> RunResult:
    """The analytic fleet at the stored case ``name``."""
    case = load()[name]
    scenario = load_scenario(case["preset"], list(case["overrides"]))
    (result,) = analytic_points(case["preset"], [scenario], Transport(case["transport"]))
    assert isinstance(result, RunResult), f"{name}: the analytic point is unstable"
    return result


def refused_s_per_turn(result: RunResult) -> float:
    limited = result.fleet.rate_limit
    return 0.0 if limited is None else limited.refused_s_per_turn


def _shown(values: list[float], scale: float, digits: int) -> str:
    mean, half = interval(values)
    return f"{mean * scale:.{digits}f} ± {half * scale:.{digits}f}"


def residency() -> str:
    body = []
    for case in cases("residency"):
        result = analytic(case["name"])
        mean, _ = interval(case["values"]["hit_rate"])
        body.append(
            [
                case["name"],
                _shown(case["values"]["hit_rate"], 100, 1),
                f"{result.prefix_cache_hit_rate * 100:.1f}",
                f"{(result.prefix_cache_hit_rate - mean) * 100:+.1f}",
                _shown(case["values"]["e2e_s"], 1, 2),
                f"{result.e2e_s.mean:.2f}",
            ]
        )
    header = [
        "200 ws agents: eviction, routing, KV memory per replica",
        "DES hit rate % (95% CI)",
        "analytic %",
        "analytic - DES (points)",
        "DES e2e s (95% CI)",
        "analytic e2e s",
    ]
    return table(header, body)


def affinity() -> str:
    body = []
    for case in cases("affinity"):
        result = analytic(case["name"])
        values = case["values"]
        wait_s = result.fleet.wait_s_per_turn[Pool.INFERENCE]
        body.append(
            [
                case["name"].split(",")[0],
                _shown(values["hit_rate"], 100, 1),
                f"{result.prefix_cache_hit_rate * 100:.1f}",
                _shown(values["inference_wait_s_per_turn"], 1e3, 0),
                f"{wait_s * 1e3:.0f}",
                _shown(values["e2e_s"], 1, 2),
                f"{result.e2e_s.mean:.2f}",
            ]
        )
    header = [
        "routing",
        "DES hit rate %",
        "analytic %",
        "DES wait for a replica, ms per turn",
        "analytic",
        "DES e2e s",
        "analytic e2e s",
    ]
    return table(header, body)


def knee() -> str:
    body = []
    for case in cases("knee"):
        result = analytic(case["name"])
        mean, half = interval(case["values"]["e2e_s"])
        body.append(
            [
                case["name"],
                case["transport"],
                case["overrides"][-1].removeprefix("load.agents="),
                f"{mean:.2f} ± {half:.2f}",
                f"{result.e2e_s.mean:.2f}",
                f"{(result.e2e_s.mean / mean - 1) * 100:+.1f}%",
                "yes" if abs(result.e2e_s.mean - mean) <= half else "no",
            ]
        )
    header = [
        "bottleneck, population",
        "transport",
        "agents",
        "DES e2e s (95% CI)",
        "analytic e2e s",
        "error",
        "inside the CI",
    ]
    return table(header, body)


def rate_limit() -> str:
    body = []
    for case in cases("rate-limit"):
        result = analytic(case["name"])
        body.append(
            [
                case["name"],
                _shown(case["values"]["e2e_s"], 1, 2),
                f"{result.e2e_s.mean:.2f}",
                _shown(case["values"]["refused_s_per_turn"], 1, 3),
                f"{refused_s_per_turn(result):.3f}",
            ]
        )
    header = [
        "case",
        "DES e2e s (95% CI)",
        "analytic e2e s",
        "DES refused s per turn (95% CI)",
        "analytic",
    ]
    return table(header, body)


def bounds() -> str:
    """Every approximation flag and the largest error it was measured to cost."""
    body = [[f"`{flag}`", "one agent", text] for flag, text in AGENT_BOUNDS.items()]
    body += [[f"`{flag}`", "fleet", text] for flag, text in FLEET_BOUNDS.items()]
    return table(["flag", "engine", "at most"], body)


def residency_error(pinned: bool) -> float:
    """The largest |analytic - DES| hit rate over the fleet's stored cases of one eviction,
    in points."""
    errors = [
        abs(analytic(c["name"]).prefix_cache_hit_rate - interval(c["values"]["hit_rate"])[0])
        for c in cases("residency")
        if c["name"].startswith("ttl-pin") == pinned
    ]
    return max(errors) * 100


def knee_error() -> float:
    """The largest |analytic / DES - 1| of the e2e from 0.5 to 1.5 times N*, in percent."""
    errors = []
    for case in cases("knee"):
        mean, _ = interval(case["values"]["e2e_s"])
        errors.append(abs(analytic(case["name"]).e2e_s.mean / mean - 1))
    return max(errors) * 100


def des_mean(name: str, quantity: str) -> float:
    return interval(load()[name]["values"][quantity])[0]


def affinity_quotes() -> tuple[str, str]:
    """(the hit-rate points the best of the blind policies finds less than affinity, the hash's
    wait over affinity's), both from the DES."""
    suffix = ", 4 replicas of 4 streams"
    bound = des_mean("affinity" + suffix, "hit_rate")
    blind = max(des_mean(p + suffix, "hit_rate") for p in ("least-loaded", "random", "round-robin"))
    wait = des_mean("consistent-hash" + suffix, "inference_wait_s_per_turn")
    wait /= des_mean("affinity" + suffix, "inference_wait_s_per_turn")
    return f"{(bound - blind) * 100:.1f}", f"{wait:.1f}"


def quotes() -> list[Quote]:
    return [
        (
            "docs/load.md",
            "least-loaded, random and round-robin find at least {} points less of the history",
            (affinity_quotes()[0],),
        ),
        (
            "docs/load.md",
            "waits {} times as long as affinity for a replica",
            (affinity_quotes()[1],),
        ),
        (
            "docs/load.md",
            "Inside the DES's interval at every population, and within {}% of its mean",
            (f"{knee_error():.1f}",),
        ),
        (
            "docs/load.md",
            "The analytic hit rate is within {} points of the DES under `lru` and {}",
            (f"{residency_error(False):.1f}", f"{residency_error(True):.1f}"),
        ),
    ]


BLOCKS = {
    "approximation-bounds": bounds,
    "residency-accuracy": residency,
    "affinity-accuracy": affinity,
    "knee-accuracy": knee,
    "rate-limit-accuracy": rate_limit,
}


def main() -> None:
    for name, block in BLOCKS.items():
        print(f"{name}:\n{block()}\n")


if __name__ == "__main__":
    main()
