"""Sensitivity of the codex-spark end-to-end reduction (http -> ws), analytic engine.

The blocks of docs/calibration.md sections 3 and 4: where the saved seconds come
from (expected seconds per rollout by stage), and a one-at-a-time (tornado) table:
each parameter set low and high around the preset, everything else at the
preset.  ``docs/scripts/sensitivity_quotes.py`` quotes the prose's numbers; this
script quotes the preset's expected work per rollout in docs/model/latency.md and what
the model pages say of the parallel classifiers and the download's byte term.

    .venv/bin/python -m docs.scripts.sensitivity
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from docs.scripts.markdown import Quote, about, table
from models.loading import load_scenario
from models.stages import STAGES, Stage
from sim.analytic.agent.engine import Expectation, expect
from sim.turn.transports import Transport

PRESET = "codex-spark"
TURN_PAGE, LATENCY_PAGE = "docs/model/turn.md", "docs/model/latency.md"
OMISSIONS_PAGE = "docs/model/omissions.md"


@dataclass(frozen=True)
class Case:
    """One parameter varied one at a time: its preset value and two settings."""

    label: str
    preset: str
    low: str
    high: str
    low_overrides: tuple[str, ...]
    high_overrides: tuple[str, ...]


def scaled(path: str, preset_value: float, factor_low: float = 0.5, factor_high: float = 2.0):
    """A case that multiplies one numeric field by ``factor_low`` and ``factor_high``."""
    low, high = preset_value * factor_low, preset_value * factor_high
    return Case(
        f"`{path}`",
        f"{preset_value:g}",
        f"{low:g}",
        f"{high:g}",
        (f"{path}={low!r}",),
        (f"{path}={high!r}",),
    )


def tool_time_case() -> Case:
    """Every tool's time_s median scaled by 0.5 and 2 (the sigmas unchanged)."""
    tools = load_scenario(PRESET).workload.tools
    low = tuple(
        f"workload.tools[{i}].time_s.median={t.time_s.median * 0.5!r}" for i, t in enumerate(tools)
    )
    high = tuple(
        f"workload.tools[{i}].time_s.median={t.time_s.median * 2.0!r}" for i, t in enumerate(tools)
    )
    return Case("tool time (every tool's `time_s` median)", "x1", "x0.5", "x2", low, high)


def cases() -> list[Case]:
    s = load_scenario(PRESET)
    return [
        scaled("network.rtt_ms", s.network.rtt_ms),
        scaled("safety.blocking_per_1k_tokens_ms", s.safety.blocking_per_1k_tokens_ms),
        scaled("api.render_per_1k_tokens_ms", s.api.render_per_1k_tokens_ms),
        scaled("api.render_cache_hit_prob", s.api.render_cache_hit_prob),
        scaled("api.state_store_per_kb_ms", s.api.state_store_per_kb_ms),
        scaled("api.post_fixed_ms", s.api.post_fixed_ms),
        scaled("api.validate_per_item_ms", s.api.validate_per_item_ms),
        scaled("inference.prefill_tps", s.inference.prefill_tps),
        Case(
            "`inference.decode_tps` (constant)",
            "mixture, 1 / E[1/rate] = 1,103",
            "500",
            "2000",
            ("inference.decode_tps=500.0",),
            ("inference.decode_tps=2000.0",),
        ),
        tool_time_case(),
        Case(
            "`workload.tool_calls_per_rollout` (constant)",
            "empirical 20-40, mean 28.75",
            "10",
            "60",
            ("workload.tool_calls_per_rollout=10",),
            ("workload.tool_calls_per_rollout=60",),
        ),
        scaled("workload.output_tokens.median", s.workload.output_tokens.median),
        Case(
            "`inference.prefix_cache_hit_fraction` (miss fraction x2 / x0.5)",
            "0.9",
            "0.8",
            "0.95",
            ("inference.prefix_cache_hit_fraction=0.8",),
            ("inference.prefix_cache_hit_fraction=0.95",),
        ),
        scaled("safety.blocking_fixed_ms", s.safety.blocking_fixed_ms),
        scaled("api.state_store_fixed_ms", s.api.state_store_fixed_ms),
        scaled("workload.instructions_tokens", s.workload.instructions_tokens),
        scaled("connection.ws_drops_per_hour", s.connection.ws_drops_per_hour, 0.0, 20.0),
        Case(
            "`connection.store`, with 10 drops per hour",
            "true",
            "false",
            "true",
            ("connection.store=false", "connection.ws_drops_per_hour=10.0"),
            ("connection.ws_drops_per_hour=10.0",),
        ),
    ]


@cache
def pair(overrides: tuple[str, ...] = ()) -> tuple[Expectation, Expectation]:
    scenario = load_scenario(PRESET, list(overrides))
    return expect(scenario, Transport.HTTP), expect(scenario, Transport.WS)


def reduction(overrides: tuple[str, ...] = ()) -> float:
    http, ws = pair(overrides)
    return 1.0 - ws.e2e_s / http.e2e_s


def stage_s(expectation: Expectation, *stages: Stage) -> float:
    return float(sum(expectation.stage_s[STAGES.index(stage)] for stage in stages))


def savings_by_stage() -> str:
    http, ws = pair()
    saved = http.e2e_s - ws.e2e_s
    body = []
    for index, stage in enumerate(STAGES):
        delta = http.stage_s[index] - ws.stage_s[index]
        if abs(http.stage_s[index]) + abs(ws.stage_s[index]) < 5e-4:
            continue
        body.append(
            [
                f"`{stage.value}`",
                f"{http.stage_s[index]:.3f}",
                f"{ws.stage_s[index]:.3f}",
                f"{delta:+.3f}",
                f"{delta / saved:.1%}",
                f"{delta / http.e2e_s * 100:+.1f}",
            ]
        )
    body.append(
        [
            "**total**",
            f"{http.e2e_s:.3f}",
            f"{ws.e2e_s:.3f}",
            f"{saved:+.3f}",
            "100.0%",
            f"{reduction() * 100:.1f}",
        ]
    )
    header = [
        "stage",
        "http (s/rollout)",
        "ws (s/rollout)",
        "saved (s)",
        "share of the saving",
        "points of the reduction",
    ]
    return table(header, body)


@cache
def swings() -> dict[str, tuple[float, float]]:
    """Case label -> (reduction at low, reduction at high)."""
    return {c.label: (reduction(c.low_overrides), reduction(c.high_overrides)) for c in cases()}


def tornado() -> str:
    base = reduction()
    by_case = {case.label: case for case in cases()}
    rows = sorted(swings().items(), key=lambda item: abs(item[1][1] - item[1][0]), reverse=True)
    body = [
        [
            label,
            by_case[label].preset,
            by_case[label].low,
            by_case[label].high,
            f"{low:.3f}",
            f"{high:.3f}",
            f"{(low - base) * 100:+.1f} / {(high - base) * 100:+.1f}",
        ]
        for label, (low, high) in rows
    ]
    header = [
        "parameter",
        "preset",
        "low",
        "high",
        "reduction at low",
        "reduction at high",
        "change (points) low / high",
    ]
    return table(header, body)


BLOCKS = {"savings": savings_by_stage, "tornado": tornado}


def quotes() -> list[Quote]:
    """What the model pages say of the preset's expected work, of its parallel classifiers and
    of the download's byte term."""
    s = load_scenario(PRESET)
    http, ws = pair()
    miss = 1 - s.inference.prefix_cache_hit_fraction
    byte_ms = (
        s.workload.output_tokens.mean * s.network.bytes_per_token / s.network.downlink_bytes_per_s
    )
    if stage_s(ws, Stage.RECOVER):
        raise ValueError("a failed continuation adds API work off the stages")
    api_stages = (Stage.VALIDATE, Stage.STATE_LOAD, Stage.RENDER, Stage.ROUTE, Stage.POST)
    overlapped_s = ws.api_cpu_s - stage_s(ws, *api_stages)
    return [
        (
            LATENCY_PAGE,
            "is {} s over `http` and {} s over `ws`, of which {} s is post-inference work "
            "overlapped with the next request; safety work is {} s and {} s.",
            (
                f"{http.api_cpu_s:.2f}",
                f"{ws.api_cpu_s:.2f}",
                f"{overlapped_s:.2f}",
                f"{http.safety_cpu_s:.2f}",
                f"{ws.safety_cpu_s:.2f}",
            ),
        ),
        (
            TURN_PAGE,
            "prefill ≥ {} ms + T / {} ms for T classified tokens",
            (f"{s.inference.overhead_ms:g}", f"{s.inference.prefill_tps / miss / 1000:,.0f}"),
        ),
        (
            TURN_PAGE,
            "while P = {} ms + T / {} ms.",
            (
                f"{s.safety.parallel_fixed_ms:g}",
                f"{1000 / s.safety.parallel_per_1k_tokens_ms:,.0f}",
            ),
        ),
        (OMISSIONS_PAGE, "the byte term is about {} ms per turn", (about(byte_ms * 1000, 1),)),
    ]


def main() -> None:
    print("## Where the saving comes from\n")
    print(savings_by_stage())
    print(f"\n## One at a time (preset reduction, analytic: {reduction():.3f})\n")
    print(tornado())


if __name__ == "__main__":
    main()
