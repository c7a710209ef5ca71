"""The four calibration targets as docs/calibration.md reports them.

Runs each comparison the way ``loopbudget compare SPEC_A SPEC_B --json`` does
(DES, 500 rollouts, preset seed) and with the analytic engine: the table of the
four targets, the table of all comparisons, the spread of the headline
reduction over 40 other seeds, and the numbers the prose of section 2 (and the
README) quotes from them.

    .venv/bin/python -m docs.scripts.targets
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from docs.scripts.markdown import Quote, percent, table
from sim.analysis.flagship import flagship_reduction
from sim.analysis.run import Engine, execute, load, parse_spec
from sim.analysis.summary import compare

ROLLOUTS = 500
SEEDS = range(1, 41)
PAGE = "docs/calibration.md"

COMPARISONS = (
    ("codex-spark:http", "codex-spark:ws"),
    ("gpt5-flagship:http", "gpt5-flagship:ws"),
    ("responses-2025:http", "codex-spark:http"),
    ("codex-spark:ws", "codex-spark:ws-append"),
    ("codex-spark:http", "codex-spark:ws-append"),
    ("codex-spark:http", "codex-spark:http-full"),
)


@cache
def compared(spec_a: str, spec_b: str, engine: Engine = Engine.DES) -> dict[str, Any]:
    runs = []
    for text in (spec_a, spec_b):
        spec = parse_spec(text)
        runs.append(execute(spec, load(spec), engine, ROLLOUTS))
    return compare(*runs).to_json()


def interval(result: dict[str, Any], key: str) -> str:
    low, high = result[f"{key}_ci95"]
    return f"{result[key]:.3f} [{low:.3f}, {high:.3f}]"


def mean(run: dict[str, Any], key: str, scale: float = 1.0, digits: int = 2) -> str:
    low, high = run[key]["ci95"]
    return (
        f"{run[key]['mean'] * scale:.{digits}f} "
        f"[{low * scale:.{digits}f}, {high * scale:.{digits}f}]"
    )


@cache
def across_seeds(seeds: range = SEEDS) -> np.ndarray:
    """The codex-spark reduction at 500 rollouts for other seeds: how much the seed moves it."""
    values = []
    for seed in seeds:
        runs = []
        for text in ("codex-spark:http", "codex-spark:ws"):
            spec = parse_spec(text)
            runs.append(execute(spec, load(spec, seed=seed), Engine.DES, ROLLOUTS))
        values.append(compare(*runs).to_json()["e2e_reduction"])
    return np.array(values)


def comparisons() -> str:
    body = []
    for spec_a, spec_b in COMPARISONS:
        des, analytic = compared(spec_a, spec_b), compared(spec_a, spec_b, Engine.ANALYTIC)
        a, b = des["a"], des["b"]
        body.append(
            [
                f"`{spec_a}`",
                f"`{spec_b}`",
                mean(a, "e2e_s"),
                mean(b, "e2e_s"),
                interval(des, "e2e_reduction"),
                mean(a, "ttft_s", 1000, 1),
                mean(b, "ttft_s", 1000, 1),
                interval(des, "ttft_reduction"),
                interval(des, "api_cpu_reduction"),
                f"{analytic['e2e_reduction']:.3f} / {analytic['ttft_reduction']:.3f}",
            ]
        )
    header = [
        "a",
        "b",
        "a e2e (s)",
        "b e2e (s)",
        "e2e reduction",
        "a TTFT (ms)",
        "b TTFT (ms)",
        "TTFT reduction",
        "API work reduction",
        "analytic e2e / TTFT reduction",
    ]
    return table(header, body)


def band_target(spec_a: str, spec_b: str, key: str, low: float, high: float, whole: bool):
    """A target row: the DES value with its CI and the analytic value, and whether it holds
    (for the value, or for the whole CI when ``whole``)."""
    des, analytic = compared(spec_a, spec_b), compared(spec_a, spec_b, Engine.ANALYTIC)
    ci_low, ci_high = des[f"{key}_ci95"]
    inside = (low < ci_low and ci_high <= high) if whole else low < des[key] <= high
    holds = ("yes, the whole CI" if whole else "yes") if inside else "no"
    return f"{interval(des, key)}; analytic {analytic[key]:.3f}", holds


def ordering() -> tuple[str, str]:
    """ws-append <= ws <= http on codex-spark, the means and the paired reductions."""
    a = compared("codex-spark:ws", "codex-spark:ws-append")
    b = compared("codex-spark:http", "codex-spark:ws")
    means = [a["b"], a["a"], b["a"]]
    text = " ≤ ".join(f"{mean(run, 'e2e_s')} s" for run in means)

    def faster(result: dict[str, Any]) -> str:
        low, high = result["e2e_reduction_ci95"]
        value = result["e2e_reduction"]
        return f"{value:.1%} [{low * 100:.1f}, {high * 100:.1f}]"

    text += (
        f"; paired: `ws-append` {faster(a)} faster than `ws`, `ws` {faster(b)} faster than `http`"
    )
    ordered = means[0]["e2e_s"]["mean"] <= means[1]["e2e_s"]["mean"] <= means[2]["e2e_s"]["mean"]
    return text, "yes" if ordered else "no"


def targets() -> str:
    rows = [
        (
            "`compare codex-spark:http codex-spark:ws`, e2e reduction",
            "0.36 to 0.44",
            *band_target("codex-spark:http", "codex-spark:ws", "e2e_reduction", 0.36, 0.44, True),
        ),
        (
            "`compare gpt5-flagship:http gpt5-flagship:ws`, e2e reduction",
            "> 0 and ≤ 0.12",
            *band_target("gpt5-flagship:http", "gpt5-flagship:ws", "e2e_reduction", 0, 0.12, False),
        ),
        (
            "`compare responses-2025:http codex-spark:http`, TTFT reduction",
            "0.40 to 0.50",
            *band_target(
                "responses-2025:http", "codex-spark:http", "ttft_reduction", 0.4, 0.5, False
            ),
        ),
        ("mean e2e on `codex-spark`: `ws-append` ≤ `ws` ≤ `http`", "ordering", *ordering()),
    ]
    return table(["target", "required", "model", "holds"], [list(row) for row in rows])


BLOCKS = {"targets": targets, "comparisons": comparisons}


def quotes() -> list[Quote]:
    seeds = across_seeds()
    headline = compared("codex-spark:http", "codex-spark:ws")
    flagship = compared("gpt5-flagship:http", "gpt5-flagship:ws")
    sprint = compared("responses-2025:http", "codex-spark:http")
    full = compared("codex-spark:http", "codex-spark:http-full", Engine.ANALYTIC)
    analytic = compared("codex-spark:http", "codex-spark:ws", Engine.ANALYTIC)
    low, high = headline["e2e_reduction_ci95"]
    half = (high - low) / 2
    extra = {
        k: full["b"]["budget_s"][k] - full["a"]["budget_s"][k] for k in ("client_build", "upload")
    }
    return [
        (
            PAGE,
            "reduction averages {} (standard deviation {}, range {}–{}); the analytic value "
            "is {}. That spread matches the width of the paired CI (half-width {}, a standard "
            "error of about {})",
            (
                f"{seeds.mean():.3f}",
                f"{seeds.std(ddof=1):.4f}",
                f"{seeds.min():.3f}",
                f"{seeds.max():.3f}",
                f"{analytic['e2e_reduction']:.3f}",
                f"{half:.4f}",
                f"{half / 1.96:.4f}",
            ),
        ),
        (
            PAGE,
            "the mean TTFT falls by {} on `codex-spark` and {} on `gpt5-flagship`, and API "
            "work (overlapped post-inference work included) by {}",
            (
                percent(headline["ttft_reduction"]),
                percent(flagship["ttft_reduction"]),
                percent(headline["api_cpu_reduction"]),
            ),
        ),
        (PAGE, "workload is {}; FACTS states only", (percent(sprint["e2e_reduction"]),)),
        (
            PAGE,
            "ends within {} of `http`: the client's extra build and upload ({} s and {} s per "
            "rollout) roughly equal the state loads they avoid ({} s)",
            (
                percent(abs(full["e2e_reduction"]), 1),
                f"{extra['client_build']:.2f}",
                f"{extra['upload']:.2f}",
                f"{full['a']['budget_s']['state_load']:.2f}",
            ),
        ),
        (
            "README.md",
            "the same model gives {} for the 65 tokens/s flagship",
            (percent(flagship_reduction(), 1),),
        ),
    ]


def main() -> None:
    print(targets())
    print()
    print(comparisons())
    seeds = across_seeds()
    print(
        f"\ncodex-spark e2e reduction over seeds {SEEDS.start}-{SEEDS.stop - 1} "
        f"({ROLLOUTS} rollouts each): mean {seeds.mean():.4f}, standard deviation "
        f"{seeds.std(ddof=1):.4f}, range {seeds.min():.3f}-{seeds.max():.3f}"
    )


if __name__ == "__main__":
    main()
