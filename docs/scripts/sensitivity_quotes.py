"""The numbers the prose of docs/calibration.md reads from the sensitivity of the 40%.

Sections 2 to 4, 7 and 8: what the target pins down, what is left without the
costs only HTTP pays, the parameters that move the reduction most, and the
rates the fitted values imply.  All from the analytic engine on codex-spark
(``docs/scripts/sensitivity.py`` holds the tables and the cases).

    .venv/bin/python -m docs.scripts.sensitivity_quotes
"""

from __future__ import annotations

from docs.scripts.markdown import Quote, about, percent, show, signed
from docs.scripts.sensitivity import PRESET, pair, reduction, stage_s, swings
from models.loading import load_scenario
from models.stages import STAGES, Group, Stage

PAGE = "docs/calibration.md"
TARGET_BAND = (0.36, 0.44)
"""FACTS: up to about 40% faster, as the calibration test accepts it."""
HTTP_ONLY_COSTS = (
    "api.validate_per_item_ms",
    "api.state_store_per_kb_ms",
    "api.state_store_fixed_ms",
    "api.render_per_1k_tokens_ms",
    "safety.blocking_per_1k_tokens_ms",
    "api.post_fixed_ms",
)
"""The per-unit costs that only HTTP pays at full-history scale."""
SLOW_TEST_RUN = ("workload.tools[3].time_s.median=6.0",)
"""Every run_tests median at 6 s instead of 1.5 s."""
API_SIDE = (
    "`api.render_cache_hit_prob`",
    "`api.state_store_per_kb_ms`",
    "`api.state_store_fixed_ms`",
    "`api.post_fixed_ms`",
    "`api.validate_per_item_ms`",
    "`safety.blocking_fixed_ms`",
)
"""The API-side costs other than the classifier and render rates."""
DENOMINATOR = (
    "`workload.tool_calls_per_rollout` (constant)",
    "tool time (every tool's `time_s` median)",
    "`workload.output_tokens.median`",
    "`inference.decode_tps` (constant)",
)


def change(label: str) -> tuple[float, float]:
    """Points the reduction moves at the low and the high setting of one case."""
    base = reduction()
    low, high = swings()[label]
    return (low - base) * 100, (high - base) * 100


def points(stage: Stage) -> str:
    """Points of the preset reduction that one stage's saving makes."""
    http, ws = pair()
    return f"{(stage_s(http, stage) - stage_s(ws, stage)) / http.e2e_s * 100:.1f}"


def target_quotes() -> list[Quote]:
    http, ws = pair()
    turns = float(http.turns)
    low, high = (ws.e2e_s * r / (1 - r) for r in TARGET_BAND)
    saved = http.e2e_s - ws.e2e_s
    network = stage_s(ws, *(s for s in STAGES if s.group is Group.NETWORK))
    named = stage_s(ws, Stage.TOOL) + stage_s(ws, Stage.DECODE) + stage_s(ws, Stage.PREFILL)
    zeroed = tuple(f"{path}=0.0" for path in HTTP_ONLY_COSTS)
    return [
        (
            PAGE,
            "With E_ws = {} s the target band 0.36–0.44 means S between {} s and {} s per "
            "rollout, {} to {} ms per turn over {} turns; the preset has S = {} s "
            "({} ms per turn).",
            (
                f"{ws.e2e_s:.2f}",
                f"{low:.1f}",
                f"{high:.1f}",
                about(low / turns * 1000),
                about(high / turns * 1000),
                f"{turns:g}",
                f"{saved:.2f}",
                f"{saved / turns * 1000:.0f}",
            ),
        ),
        (PAGE, "to 0 leaves a reduction of {}:", (percent(reduction(zeroed), 1),)),
        (
            PAGE,
            "E_ws (tools {} s, decode {} s, prefill {} s, network {} s, the rest {} s)",
            (
                *(f"{stage_s(ws, s):.2f}" for s in (Stage.TOOL, Stage.DECODE, Stage.PREFILL)),
                f"{network:.2f}",
                f"{ws.e2e_s - named - network:.2f}",
            ),
        ),
        (
            PAGE,
            "The published figure fixes only the total of items 1–5 ({} to {} s per",
            (f"{low:.1f}", f"{high:.1f}"),
        ),
    ]


def parameter_quotes() -> list[Quote]:
    cases = swings()
    render = change("`api.render_per_1k_tokens_ms`")
    others = max(abs(p) for label in API_SIDE for p in change(label))
    moves = [abs(p) for label in DENOMINATOR for p in change(label)]
    slow_tests = reduction(SLOW_TEST_RUN)
    return [
        (
            PAGE,
            "(section 4: {} at 10 tool calls, {} with tools twice as slow, {} with a 6 s test run)",
            (
                percent(cases[DENOMINATOR[0]][0]),
                percent(cases[DENOMINATOR[1]][1]),
                percent(slow_tests),
            ),
        ),
        (
            PAGE,
            "halving it to 3 ms per 1k tokens gives {}, doubling it {}. Rendering moves it by "
            "{} / {} points; every other API-side cost by {} points or less",
            (
                *(f"{r:.3f}" for r in cases["`safety.blocking_per_1k_tokens_ms`"]),
                signed(render[0]),
                signed(render[1]),
                f"{others:.0f}",
            ),
        ),
        (
            PAGE,
            "Tools twice as slow give {}; a decode rate of 500 tokens/s gives {}; twice the "
            "output per turn {} (more",
            (
                f"{cases[DENOMINATOR[1]][1]:.3f}",
                f"{cases[DENOMINATOR[3]][0]:.3f}",
                f"{cases[DENOMINATOR[2]][1]:.3f}",
            ),
        ),
        (PAGE, "({} at 60 ms)", (f"{cases['`network.rtt_ms`'][1]:.3f}",)),
        (
            PAGE,
            "raises the reduction to {}, because HTTP re-processes them every turn; a lower "
            "render-cache hit rate raises it ({} at 0.15).",
            (
                f"{cases['`workload.instructions_tokens`'][1]:.3f}",
                f"{cases['`api.render_cache_hit_prob`'][0]:.3f}",
            ),
        ),
        (
            PAGE,
            "tools unchanged) gives {}: {}.",
            (f"{slow_tests:.3f}", percent(slow_tests)),
        ),
        (
            PAGE,
            "With a 6 s test run the reduction is {}; with twice the output, {}.",
            (percent(slow_tests), percent(cases[DENOMINATOR[2]][1])),
        ),
        (
            PAGE,
            "the reduction moves by {} to {} points.",
            (f"{min(moves):.0f}", f"{max(moves):.0f}"),
        ),
    ]


def implied_quotes() -> list[Quote]:
    s, before = load_scenario(PRESET), load_scenario("responses-2025")
    a, sf, w = s.api, s.safety, s.workload
    classifier_tps = 1e6 / sf.blocking_per_1k_tokens_ms
    render_tps = 1e6 / a.render_per_1k_tokens_ms
    store_kb_per_s = 1 / a.state_store_per_kb_ms * 1000
    state_kb = 30_000 * a.state_bytes_per_token / 1024
    items = 1 + 30 * (w.output_items_per_turn + 1)
    tool_ms = w.mean_tool_time_s()
    return [
        (
            PAGE,
            "about {} tokens/s per request; {} ms for a 30,000-token prompt",
            (
                about(classifier_tps),
                f"{sf.blocking_fixed_ms + 30 * sf.blocking_per_1k_tokens_ms:.0f}",
            ),
        ),
        (
            PAGE,
            "Pre-sprint, 10 ms per 1k ({} tokens/s)",
            (about(1e6 / before.safety.blocking_per_1k_tokens_ms),),
        ),
        (
            PAGE,
            "about {} tokens/s, about {} MB/s of text",
            (about(render_tps), f"{render_tps * s.network.bytes_per_token / 1e6:.1f}"),
        ),
        (
            PAGE,
            "Moves the result by {} points at most",
            (f"{max(abs(p) for p in change('`api.render_cache_hit_prob`')):.0f}",),
        ),
        (
            PAGE,
            "about {} MB/s effective; {} ms for a 30,000-token state ({} KB)",
            (
                about(store_kb_per_s * 1024 / 1e6, 1),
                f"{a.state_store_fixed_ms + a.state_store_per_kb_ms * state_kb:.0f}",
                f"{state_kb:.0f}",
            ),
        ),
        (
            PAGE,
            "Halving it costs {} point.",
            (f"{abs(change('`api.state_store_per_kb_ms`')[0]):.0f}",),
        ),
        (
            PAGE,
            "| {} ms at {} items |",
            (f"{a.validate_fixed_ms + a.validate_per_item_ms * items:.1f}", f"{items}"),
        ),
        (
            PAGE,
            "| {} ms per turn |",
            (f"{a.post_fixed_ms + a.post_per_1k_tokens_ms * w.output_tokens.mean / 1000:.1f}",),
        ),
        (
            PAGE,
            "| {} ms per request |",
            (f"{before.api.hop_ms * before.api.intermediate_hops:.0f}",),
        ),
        (
            PAGE,
            "client: {} ms of tool time per call on average",
            (f"{tool_ms * 1000:.0f}",),
        ),
        (PAGE, "run) and {} output tokens per turn.", (f"{w.output_tokens.mean:.0f}",)),
        (
            PAGE,
            "prompt every turn at about {} tokens/s; half of the saving ({} of the {} points).",
            (about(classifier_tps), points(Stage.SAFETY), f"{reduction() * 100:.1f}"),
        ),
        (
            PAGE,
            "**Full re-rendering** at about {} tokens/s, with a 30% render-cache hit "
            "rate: {} points.",
            (about(render_tps), points(Stage.RENDER)),
        ),
        (
            PAGE,
            "from storage at about {} MB/s plus 20 ms: {} points.",
            (about(store_kb_per_s * 1024 / 1e6, 1), points(Stage.STATE_LOAD)),
        ),
        (PAGE, "overlapped over WebSocket: {} points.", (points(Stage.POST),)),
        (PAGE, "history item at 0.5 ms: {} points.", (points(Stage.VALIDATE),)),
        (
            PAGE,
            "and about {} tokens/s of decode.",
            (about(1 / s.inference.decode_tps.mean_reciprocal()),),
        ),
    ]


def quotes() -> list[Quote]:
    return [*target_quotes(), *parameter_quotes(), *implied_quotes()]


if __name__ == "__main__":
    show(quotes())
