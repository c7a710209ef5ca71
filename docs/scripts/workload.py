"""The moments of codex-spark's workload and of the hardware profiles' decode rates that
docs/calibration.md (section 1) quotes beside the parameters.

    .venv/bin/python -m docs.scripts.workload
"""

from __future__ import annotations

from docs.scripts.markdown import Quote, show
from models.hardware import hardware_registry
from models.loading import load_scenario

PRESET = "codex-spark"
CALIBRATION = "docs/calibration.md"


def quotes() -> list[Quote]:
    w = load_scenario(PRESET).workload
    profiles = hardware_registry()
    flagship, cerebras = profiles["gpu-flagship"].decode_tps, profiles["cerebras-class"].decode_tps
    tool_s, tool_tokens = w.mean_tool_time_s(), w.mean_tool_output_tokens()
    return [
        (
            CALIBRATION,
            "σ 0.15 (1 / E[1/rate] = {} tokens/s)",
            (f"{1 / flagship.mean_reciprocal():.0f}",),
        ),
        (
            CALIBRATION,
            "(mean {}, 1 / E[1/rate] = {} tokens/s)",
            (f"{cerebras.mean:,.0f}", f"{1 / cerebras.mean_reciprocal():,.0f}"),
        ),
        (
            "docs/dashboard.md",
            "codex-spark's {} sustained with bursts counts as {})",
            (f"{cerebras.components[0].median:,.0f}", f"{1 / cerebras.mean_reciprocal():,.0f}"),
        ),
        (CALIBRATION, "20–40, mean {} |", (f"{w.tool_calls_per_rollout.mean:g}",)),
        (CALIBRATION, "σ 0.7) = {} tokens per turn on average", (f"{w.output_tokens.mean:.1f}",)),
        (
            CALIBRATION,
            "(mean tool time {} s per call, mean tool output {} tokens)",
            (f"{tool_s:.3f}", f"{tool_tokens:.0f}"),
        ),
    ]


if __name__ == "__main__":
    show(quotes())
