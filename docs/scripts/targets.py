"""The four calibration targets as docs/calibration.md reports them.

Runs each comparison the way ``loopbudget compare SPEC_A SPEC_B --json`` does
(DES, 500 rollouts, preset seed) and with the analytic engine, and prints a
Markdown table; then the spread of the headline reduction over 40 other seeds.

    .venv/bin/python docs/scripts/targets.py
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.analysis.run import Engine, execute, load, parse_spec
from sim.analysis.summary import compare

ROLLOUTS = 500

COMPARISONS = (
    ("codex-spark:http", "codex-spark:ws"),
    ("gpt5-flagship:http", "gpt5-flagship:ws"),
    ("responses-2025:http", "codex-spark:http"),
    ("codex-spark:ws", "codex-spark:ws-append"),
    ("codex-spark:http", "codex-spark:ws-append"),
    ("codex-spark:http", "codex-spark:http-full"),
)


def compared(spec_a: str, spec_b: str, engine: Engine) -> dict[str, Any]:
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


def across_seeds(seeds: range = range(1, 41)) -> str:
    """The codex-spark reduction at 500 rollouts for other seeds: how much the seed moves it."""
    values = []
    for seed in seeds:
        runs = []
        for text in ("codex-spark:http", "codex-spark:ws"):
            spec = parse_spec(text)
            runs.append(execute(spec, load(spec, seed=seed), Engine.DES, ROLLOUTS))
        values.append(compare(*runs).to_json()["e2e_reduction"])
    v = np.array(values)
    return (
        f"codex-spark e2e reduction over seeds {seeds.start}-{seeds.stop - 1} "
        f"({ROLLOUTS} rollouts each): mean {v.mean():.4f}, standard deviation "
        f"{v.std(ddof=1):.4f}, range {v.min():.3f}-{v.max():.3f}"
    )


def main() -> None:
    print(
        "| a | b | a e2e (s) | b e2e (s) | e2e reduction | a TTFT (ms) | b TTFT (ms) "
        "| TTFT reduction | API work reduction | analytic e2e / TTFT reduction |"
    )
    print("| --- " * 10 + "|")
    for spec_a, spec_b in COMPARISONS:
        des = compared(spec_a, spec_b, Engine.DES)
        analytic = compared(spec_a, spec_b, Engine.ANALYTIC)
        a, b = des["a"], des["b"]
        print(
            f"| `{spec_a}` | `{spec_b}` | {mean(a, 'e2e_s')} | {mean(b, 'e2e_s')} "
            f"| {interval(des, 'e2e_reduction')} "
            f"| {mean(a, 'ttft_s', 1000, 1)} | {mean(b, 'ttft_s', 1000, 1)} "
            f"| {interval(des, 'ttft_reduction')} | {interval(des, 'api_cpu_reduction')} "
            f"| {analytic['e2e_reduction']:.3f} / {analytic['ttft_reduction']:.3f} |"
        )
    print()
    print(across_seeds())


if __name__ == "__main__":
    main()
