"""The real engine's tables in docs/testbed.md, from the measurements committed beside it.

- ``engine-profile``: docs/engine-profile.toml, written by
  ``loopbudget profile docs/testbed-real.toml --out docs/engine-profile.toml``;
- ``engine-run``: docs/engine-run.json, written by
  ``loopbudget testbed docs/testbed-real.toml --engine real --profile docs/engine-profile.toml
  -n 1 --network loopback --json``, measured beside predicted;
- ``engine-spread``: docs/engine-spread.jsonl, one line per run of
  ``tests/test_testbed_real.py`` with ``LOOPBUDGET_TESTBED_REPORT`` set: the spread of
  repeated runs against the tolerances the test asserts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docs.scripts.markdown import table
from sim.testbed.profiling.profile_file import read_profile

DOCS = Path(__file__).resolve().parents[1]
PROFILE = DOCS / "engine-profile.toml"
RUN = DOCS / "engine-run.json"
SPREAD = DOCS / "engine-spread.jsonl"
TRANSPORTS = ("http", "http-full", "ws")


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return f"constant {value['value']:.4g}"
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:.4g}"


def engine_profile() -> str:
    profile = read_profile(PROFILE)
    rows = [
        [f"`{section}.{name}`", _shown(value), profile.sources.get(f"{section}.{name}", "")]
        for section, values in profile.fields.items()
        for name, value in values.items()
    ]
    rows += [
        [f"`{name}`", _shown(value), "measured, not a scenario field"]
        for name, value in profile.measured.items()
    ]
    return table(["field", "value", "source"], rows)


def _error(measured: float, predicted: float) -> str:
    return f"{(measured - predicted) / predicted:+.1%}"


def _rows(run: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name in TRANSPORTS:
        entry = run["transports"][name]
        m, p = entry["measured"], entry["simulated"]
        cells = [name]
        for metric, scale in (("e2e_s", 1.0), ("ttft_s", 1e3)):
            cells += [
                f"{m[metric]['mean'] * scale:.3g} / {p[metric]['mean'] * scale:.3g}",
                _error(m[metric]["mean"], p[metric]["mean"]),
            ]
        for stage in ("prefill", "decode"):
            cells.append(f"{m['budget_s'][stage]:.2f} / {p['budget_s'][stage]:.2f}")
        rows.append(cells)
    return rows


def _reductions(run: dict[str, Any]) -> list[list[str]]:
    rows = []
    for key, label in (
        ("reduction", "http -> ws"),
        ("reduction_from_http_full", "http-full -> ws"),
    ):
        measured, predicted = run[key]["measured"], run[key]["simulated"]
        rows.append(
            [label, f"{measured:.1%}", f"{predicted:.1%}", f"{(measured - predicted) * 100:+.1f}"]
        )
    return rows


def engine_run() -> str:
    run = json.loads(RUN.read_text())
    header = [
        "transport",
        "e2e mean s (meas / pred)",
        "err",
        "TTFT mean ms (meas / pred)",
        "err",
        "prefill s/rollout (meas / pred)",
        "decode s/rollout (meas / pred)",
    ]
    load = run["load_average"]
    reductions = table(["reduction", "measured", "predicted", "points"], _reductions(run))
    return (
        table(header, _rows(run))
        + "\n\n"
        + reductions
        + f"\n\nLoad average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in load['start'])} at "
        f"the start, {', '.join(f'{x:.2f}' for x in load['end'])} at the end."
    )


def engine_spread() -> str:
    runs = [json.loads(line) for line in SPREAD.read_text().splitlines() if line.strip()]
    worst: dict[str, float] = {}
    for run in runs:
        for name in TRANSPORTS:
            errors = run["transports"][name]["rel_error"]
            for key in ("e2e_mean", "ttft_mean"):
                label = f"{name} {key.replace('_', ' ')}"
                worst[label] = max(worst.get(label, 0.0), abs(errors[key]))
        for key, label in (
            ("reduction", "http -> ws"),
            ("reduction_from_http_full", "http-full -> ws"),
        ):
            gap = abs(run[key]["measured"] - run[key]["simulated"]) * 100
            worst[f"{label} (points)"] = max(worst.get(f"{label} (points)", 0.0), gap)
    loads = [run["load_average"]["start"][0] for run in runs]
    rows = [
        [label, f"{value:.1f}" if "points" in label else f"{value:.1%}"]
        for label, value in worst.items()
    ]
    return (
        table([f"check (worst of {len(runs)} runs)", "worst"], rows)
        + "\n\nLoad average (1 min) at the start of each run: "
        + ", ".join(f"{x:.2f}" for x in loads)
        + "."
    )


BLOCKS = {
    "engine-profile": engine_profile,
    "engine-run": engine_run,
    "engine-spread": engine_spread,
}
