"""The tables of docs/testbed.md, from the live runs the testbed tests kept.

Run the testbed tests with ``LOOPBUDGET_TESTBED_REPORT=FILE`` (one JSON line a live
run is appended), then:

    .venv/bin/python docs/scripts/testbed_tables.py FILE [FILE ...]

prints one Markdown row per transport of each run, and the worst relative error of
each quantity over all the files given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

COLUMNS = (
    "run",
    "transport",
    "e2e mean s (meas / sim)",
    "err",
    "predicted err",
    "e2e p95 err",
    "TTFT mean ms (meas / sim)",
    "err",
    "conns / rollout",
    "misses / rollout",
    "recovery ms",
    "utilization (meas / sim)",
)


def rows(run: dict[str, Any]) -> list[list[str]]:
    out = []
    for name, entry in run["transports"].items():
        m, s, err = entry["measured"], entry["simulated"], entry["rel_error"]
        recovery = (
            f"{m['recovery_s'] * 1e3:.1f} / {s['recovery_s'] * 1e3:.1f}"
            if m.get("recovery_s") and s.get("recovery_s")
            else ""
        )
        busy = ", ".join(
            f"{pool} {m['utilization'][pool]:.0%}/{s['utilization'][pool]:.0%}"
            for pool in m.get("utilization", {})
            if s["utilization"][pool] > 0.01
        )
        misses = m.get("cache_misses_per_rollout")
        out.append(
            [
                run["spec"],
                name,
                f"{m['e2e_s']['mean']:.3f} / {s['e2e_s']['mean']:.3f}",
                f"{err['e2e_mean']:+.1%}",
                ""
                if entry.get("predicted_rel_error") is None
                else f"{entry['predicted_rel_error']['e2e_mean']:+.1%}",
                f"{err['e2e_p95']:+.1%}",
                f"{m['ttft_s']['mean'] * 1e3:.1f} / {s['ttft_s']['mean'] * 1e3:.1f}",
                f"{err['ttft_mean']:+.1%}",
                f"{m['connections_per_rollout']:.2f} / {s['connections_per_rollout']:.2f}",
                ""
                if misses is None or s.get("cache_misses_per_rollout") is None
                else f"{misses:.2f} / {s['cache_misses_per_rollout']:.2f}",
                recovery,
                busy,
            ]
        )
    return out


def main(paths: list[str]) -> None:
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    worst: dict[tuple[str, str, str], float] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            run = json.loads(line)
            for row in rows(run):
                print("| " + " | ".join(row) + " |")
            for name, entry in run["transports"].items():
                errors = {**entry["rel_error"]}
                for key, value in (entry.get("predicted_rel_error") or {}).items():
                    errors[f"predicted {key}"] = value
                for key, value in errors.items():
                    slot = (run["spec"], name, key)
                    worst[slot] = max(worst.get(slot, 0.0), abs(value))
    print()
    for (spec, name, key), value in sorted(worst.items()):
        print(f"- worst |{key}| of {spec} {name}: {value:.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
