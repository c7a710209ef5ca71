"""The http -> ws reduction against the number of tool calls, without and with compaction.

Analytic engine, codex-spark with a constant number of tool calls; compaction
at Codex's reported threshold (95% of a 272k window, tool outputs cut to 10k
tokens) and at a short 64k window, then the analytic engine against the DES
with compaction on.

    .venv/bin/python -m docs.scripts.compaction
"""

from __future__ import annotations

from functools import cache

import numpy as np

from docs.scripts.markdown import show, table
from models.loading import load_scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect
from sim.des.runners import simulate
from sim.turn.transports import Transport

PRESET = "codex-spark"
CALLS = (10, 20, 40, 80, 160, 320)
CODEX = ("compaction.threshold_tokens=258400", "compaction.tool_output_cap_tokens=10000")
SHORT = ("compaction.threshold_tokens=64000",)
VARIANTS = {"no compaction": (), "Codex-like (258,400; cap 10k)": CODEX, "64k window": SHORT}
CHECKED = (*SHORT, "workload.tool_calls_per_rollout=160")
ROLLOUTS = 2048


@cache
def reduction(n: int, overrides: tuple[str, ...]) -> tuple[float, float]:
    """(1 - ws / http, compaction requests' seconds per ws rollout) at ``n`` tool calls."""
    s = load_scenario(PRESET, [f"workload.tool_calls_per_rollout={n}", *overrides])
    http, ws = expect(s, Transport.HTTP), expect(s, Transport.WS)
    return 1 - ws.e2e_s / http.e2e_s, float(ws.stage_s[STAGE_COLUMN[Stage.COMPACT]])


def flattening() -> str:
    body = []
    for n in CALLS:
        row = [f"{n}"]
        for overrides in VARIANTS.values():
            value, compact_s = reduction(n, overrides)
            row.append(f"{value:.3f}" + (f" ({compact_s:.1f} s)" if overrides else ""))
        body.append(row)
    header = ["tool calls n", *(f"reduction, {name}" for name in VARIANTS)]
    return table(header, body)


def agreement() -> str:
    s = load_scenario(PRESET, list(CHECKED))
    body = []
    for transport in (Transport.HTTP, Transport.WS):
        records = simulate(s, transport, ROLLOUTS)
        expected = expect(s, transport)
        for label, drawn, mean in (
            ("e2e", records.e2e_s, expected.e2e_s),
            ("compact", records.stage_s[:, STAGE_COLUMN[Stage.COMPACT]], expected.stage_s[0]),
        ):
            error = drawn.std() / np.sqrt(drawn.size)
            body.append(
                [
                    transport.value,
                    label,
                    f"{mean:.3f}",
                    f"{drawn.mean():.3f} ± {1.96 * error:.3f}",
                    f"{(drawn.mean() - mean) / error:+.2f}",
                ]
            )
    header = ["transport", "seconds per rollout", "analytic", "DES (95% CI)", "z"]
    return table(header, body)


BLOCKS = {"flattening": flattening, "compaction-agreement": agreement}

if __name__ == "__main__":
    for name, block in BLOCKS.items():
        print(name)
        print(block())
    show([])
