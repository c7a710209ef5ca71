"""Amdahl: the codex-spark reduction (http -> ws) at other decode speeds, analytic engine.

docs/calibration.md section 5: the reduction against a constant decode speed,
the three hardware profiles under the same workload and API, and the numbers
the section's prose reads from them.

    .venv/bin/python -m docs.scripts.decode_speed
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, percent, table
from models.loading import load_scenario
from models.stages import STAGES, Stage
from sim.analytic.agent.engine import Expectation, expect
from sim.turn.transports import Transport

PRESET = "codex-spark"
PAGE = "docs/calibration.md"
SPEEDS_TPS = (30, 65, 150, 500, 1000, 2000, 4000)
PROFILES = ("gpu-flagship", "gpu-midrange", "cerebras-class")


@cache
def pair(override: str | None = None) -> tuple[Expectation, Expectation]:
    scenario = load_scenario(PRESET, [override] if override else [])
    return expect(scenario, Transport.HTTP), expect(scenario, Transport.WS)


def at_speed(tps: float) -> tuple[Expectation, Expectation]:
    return pair(f"inference.decode_tps={float(tps)!r}")


def on_hardware(profile: str) -> tuple[Expectation, Expectation]:
    return pair(f"inference.hardware={profile!r}")


def reduction(http: Expectation, ws: Expectation) -> float:
    return 1.0 - ws.e2e_s / http.e2e_s


def share(expectation: Expectation, stage: Stage) -> float:
    return float(expectation.stage_s[STAGES.index(stage)] / expectation.e2e_s)


def amdahl() -> str:
    body = []
    for rate in SPEEDS_TPS:
        http, ws = at_speed(rate)
        body.append(
            [
                f"{rate:,}",
                f"{http.e2e_s:.2f}",
                f"{ws.e2e_s:.2f}",
                f"{http.e2e_s - ws.e2e_s:.2f}",
                f"{share(http, Stage.DECODE):.1%}",
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
    for profile in PROFILES:
        http, ws = on_hardware(profile)
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


BLOCKS = {"amdahl": amdahl, "hardware": hardware}


def quotes() -> list[Quote]:
    saved = {round(h.e2e_s - w.e2e_s, 2) for h, w in map(at_speed, SPEEDS_TPS)}
    if len(saved) != 1:
        raise ValueError(f"the saving is no longer the same at every decode speed: {saved}")
    (saved_s,) = saved
    slow, fast, burst = at_speed(65), at_speed(1000), at_speed(4000)
    flagship, preset = on_hardware("gpu-flagship"), pair()
    flagship_prefill_s = flagship[0].stage_s[STAGES.index(Stage.PREFILL)]
    preset_prefill_s = preset[0].stage_s[STAGES.index(Stage.PREFILL)]
    return [
        (PAGE, "The saving is {} s per rollout at every decode speed", (f"{saved_s:.2f}",)),
        (
            PAGE,
            "about 65 tokens/s decode is {} of the HTTP rollout and the same {} s is a {} gain",
            (percent(share(slow[0], Stage.DECODE)), f"{saved_s:.2f}", percent(reduction(*slow))),
        ),
        (
            PAGE,
            "at 1,000 tokens/s decode is {} and the gain {}",
            (percent(share(fast[0], Stage.DECODE)), percent(reduction(*fast))),
        ),
        (PAGE, "tokens/s bursts it would be {}.", (percent(reduction(*burst)),)),
        (
            PAGE,
            "`gpu-flagship` gives {} rather than the {} of the 65 tokens/s row",
            (percent(reduction(*flagship), 1), percent(reduction(*slow), 1)),
        ),
        (
            PAGE,
            "{} s of prefill per rollout against {} s)",
            (f"{flagship_prefill_s:.1f}", f"{preset_prefill_s:.1f}"),
        ),
    ]


def main() -> None:
    print(amdahl())
    print()
    print(hardware())


if __name__ == "__main__":
    main()
