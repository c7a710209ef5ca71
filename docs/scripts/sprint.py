"""The first sprint's TTFT: the pre-sprint API (responses-2025) against codex-spark, http.

docs/calibration.md section 6: mean TTFT per turn by stage, the TTFT reduction
with one pre-sprint assumption changed at a time (analytic engine), and the
numbers the section's prose reads from them.

    .venv/bin/python -m docs.scripts.sprint
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, table
from models.loading import load_scenario
from models.stages import FIRST_TOKEN_STAGES, STAGES, Stage
from sim.analytic.agent.engine import Expectation, expect
from sim.turn.transports import Transport

BEFORE, AFTER = "responses-2025", "codex-spark"
PAGE = "docs/calibration.md"


@cache
def http(preset: str, override: str | None = None) -> Expectation:
    return expect(load_scenario(preset, [override] if override else []), Transport.HTTP)


def gain_ms(stage: Stage) -> float:
    """Mean TTFT per turn the sprint saved in one stage, ms."""
    before, after = http(BEFORE), http(AFTER)
    index = STAGES.index(stage)
    return (before.stage_s[index] / before.turns - after.stage_s[index] / after.turns) * 1000


def sprint_ttft() -> str:
    """Mean TTFT per turn by stage: the pre-sprint API against the post-sprint one (http)."""
    before, after = http(BEFORE), http(AFTER)
    body = []
    for stage in FIRST_TOKEN_STAGES:
        index = STAGES.index(stage)
        b, a = before.stage_s[index] / before.turns, after.stage_s[index] / after.turns
        if b + a < 5e-5:
            continue
        body.append(
            [f"`{stage.value}`", f"{b * 1000:.1f}", f"{a * 1000:.1f}", f"{(b - a) * 1000:+.1f}"]
        )
    half_rtt_ms = load_scenario(AFTER).network.rtt_ms / 2
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


def sprint_sensitivity() -> str:
    """The sprint's TTFT reduction with one pre-sprint assumption changed at a time."""
    after = http(AFTER).ttft_mean_s
    base = load_scenario(BEFORE)
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
        reductions = [1 - after / http(BEFORE, f"{path}={v!r}").ttft_mean_s for v in (low, high)]
        body.append(
            [label, f"{preset:g}", f"{low:g}", f"{high:g}"] + [f"{r:.3f}" for r in reductions]
        )
    at_presets = 1 - after / http(BEFORE).ttft_mean_s
    header = [
        f"pre-sprint parameter (TTFT reduction at the presets: {at_presets:.3f})",
        "responses-2025",
        "low",
        "high",
        "reduction at low",
        "reduction at high",
    ]
    return table(header, body)


BLOCKS = {"ttft": sprint_ttft, "ttft-sensitivity": sprint_sensitivity}


def quotes() -> list[Quote]:
    total_ms = (http(BEFORE).ttft_mean_s - http(AFTER).ttft_mean_s) * 1000
    return [
        (
            PAGE,
            "Half of the {} ms gain is the two intermediate hops; the faster classifiers "
            "give a third, the configuration cache {} ms and the render cache {} ms.",
            (
                f"{total_ms:.0f}",
                f"{gain_ms(Stage.ROUTE):.0f}",
                f"{gain_ms(Stage.RENDER):.0f}",
            ),
        ),
        (
            PAGE,
            "(about {} ms per request), not their number.",
            (f"{gain_ms(Stage.HOPS):.0f}",),
        ),
    ]


def main() -> None:
    print(sprint_ttft())
    print()
    print(sprint_sensitivity())


if __name__ == "__main__":
    main()
