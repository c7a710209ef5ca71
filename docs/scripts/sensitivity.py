"""Sensitivity of the codex-spark end-to-end reduction (http -> ws), analytic engine.

Prints Markdown tables for docs/calibration.md:

1. where the saved seconds come from (expected seconds per rollout by stage);
2. a one-at-a-time (tornado) table: each parameter set low and high around
   the preset, everything else at the preset;
3. the Amdahl view: the reduction as a function of a constant decode speed;
4. the three hardware profiles under the same workload and API.

    .venv/bin/python docs/scripts/sensitivity.py
"""

from __future__ import annotations

from dataclasses import dataclass

from models.loading import load_scenario
from models.stages import FIRST_TOKEN_STAGES, STAGES
from sim.engine.analytic import Expectation, expect
from sim.engine.transports import Transport

PRESET = "codex-spark"


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


def pair(overrides: tuple[str, ...] = ()) -> tuple[Expectation, Expectation]:
    scenario = load_scenario(PRESET, list(overrides))
    return expect(scenario, Transport.HTTP), expect(scenario, Transport.WS)


def reduction(http: Expectation, ws: Expectation) -> float:
    return 1.0 - ws.e2e_s / http.e2e_s


def table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


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
            f"{reduction(http, ws) * 100:.1f}",
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


def tornado() -> str:
    base = reduction(*pair())
    rows = []
    for case in cases():
        low = reduction(*pair(case.low_overrides))
        high = reduction(*pair(case.high_overrides))
        rows.append((abs(high - low), case, low, high))
    rows.sort(key=lambda row: row[0], reverse=True)
    body = [
        [
            case.label,
            case.preset,
            case.low,
            case.high,
            f"{low:.3f}",
            f"{high:.3f}",
            f"{(low - base) * 100:+.1f} / {(high - base) * 100:+.1f}",
        ]
        for _, case, low, high in rows
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
    return f"Preset reduction (analytic): {base:.3f}\n\n" + table(header, body)


def amdahl() -> str:
    body = []
    for rate in (30, 65, 150, 500, 1000, 2000, 4000):
        http, ws = pair((f"inference.decode_tps={float(rate)!r}",))
        decode = STAGES.index(next(s for s in STAGES if s.value == "decode"))
        body.append(
            [
                f"{rate:,}",
                f"{http.e2e_s:.2f}",
                f"{ws.e2e_s:.2f}",
                f"{http.e2e_s - ws.e2e_s:.2f}",
                f"{http.stage_s[decode] / http.e2e_s:.1%}",
                f"{reduction(http, ws):.3f}",
            ]
        )
    header = [
        "decode_tps (tokens/s, constant)",
        "http e2e (s)",
        "ws e2e (s)",
        "saved (s)",
        "decode share of http e2e",
        "e2e reduction",
    ]
    return table(header, body)


def hardware() -> str:
    body = []
    for profile in ("gpu-flagship", "gpu-midrange", "cerebras-class"):
        http, ws = pair((f"inference.hardware={profile!r}",))
        body.append(
            [
                f"`{profile}`",
                f"{http.e2e_s:.2f}",
                f"{ws.e2e_s:.2f}",
                f"{http.e2e_s - ws.e2e_s:.2f}",
                f"{reduction(http, ws):.3f}",
            ]
        )
    header = ["hardware", "http e2e (s)", "ws e2e (s)", "saved (s)", "e2e reduction"]
    return table(header, body)


def sprint_ttft() -> str:
    """Mean TTFT per turn by stage: the pre-sprint API against the post-sprint one (http)."""
    before = expect(load_scenario("responses-2025"), Transport.HTTP)
    after = expect(load_scenario(PRESET), Transport.HTTP)
    body = []
    for stage in FIRST_TOKEN_STAGES:
        index = STAGES.index(stage)
        b, a = before.stage_s[index] / before.turns, after.stage_s[index] / after.turns
        if b + a < 5e-5:
            continue
        body.append(
            [f"`{stage.value}`", f"{b * 1000:.1f}", f"{a * 1000:.1f}", f"{(b - a) * 1000:+.1f}"]
        )
    half_rtt_ms = load_scenario(PRESET).network.rtt_ms / 2
    body.append(["half RTT (first token back)", f"{half_rtt_ms:.1f}", f"{half_rtt_ms:.1f}", "+0.0"])
    b, a = before.ttft_mean_s, after.ttft_mean_s
    body.append(
        [
            "**TTFT**",
            f"{b * 1000:.1f}",
            f"{a * 1000:.1f}",
            f"{(b - a) * 1000:+.1f} ({1 - a / b:.1%} reduction)",
        ]
    )
    header = ["stage", "responses-2025:http (ms/turn)", "codex-spark:http (ms/turn)", "gain (ms)"]
    return table(header, body)


def pre_sprint_ttft_s(override: str) -> float:
    scenario = load_scenario("responses-2025", [override])
    return expect(scenario, Transport.HTTP).ttft_mean_s


def sprint_sensitivity() -> str:
    """The sprint's TTFT reduction with one pre-sprint assumption changed at a time."""
    after = expect(load_scenario(PRESET), Transport.HTTP).ttft_mean_s
    base = load_scenario("responses-2025")
    cases = (
        ("`api.intermediate_hops`", base.api.intermediate_hops, (1, 3)),
        ("`api.hop_ms`", base.api.hop_ms, (40.0, 160.0)),
        ("`api.route_ms`", base.api.route_ms, (20.0, 80.0)),
        ("`safety.blocking_fixed_ms`", base.safety.blocking_fixed_ms, (10.0, 40.0)),
        ("`safety.blocking_per_1k_tokens_ms`", base.safety.blocking_per_1k_tokens_ms, (6.0, 15.0)),
    )
    body = []
    for label, preset, (low, high) in cases:
        path = label.strip("`")
        reductions = [1 - after / pre_sprint_ttft_s(f"{path}={v!r}") for v in (low, high)]
        body.append(
            [label, f"{preset:g}", f"{low:g}", f"{high:g}"] + [f"{r:.3f}" for r in reductions]
        )
    before = expect(base, Transport.HTTP).ttft_mean_s
    header = [
        f"pre-sprint parameter (TTFT reduction at the presets: {1 - after / before:.3f})",
        "responses-2025",
        "low",
        "high",
        "reduction at low",
        "reduction at high",
    ]
    return table(header, body)


def main() -> None:
    print("## Where the saving comes from\n")
    print(savings_by_stage())
    print("\n## One at a time\n")
    print(tornado())
    print("\n## Amdahl: decode speed\n")
    print(amdahl())
    print("\n## Hardware profiles\n")
    print(hardware())
    print("\n## The sprint's TTFT\n")
    print(sprint_ttft())
    print()
    print(sprint_sensitivity())


if __name__ == "__main__":
    main()
