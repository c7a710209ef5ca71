"""The DES against the analytic engine, as docs/model/analytic.md reports it.

Three tables: mean end-to-end time and turns per rollout of the presets (DES
with 20,000 rollouts at the preset seed, and the analytic expectation); the
cases where the analytic engine's approximations apply, with the DES's 95%
intervals; and the sweep of connection lifetimes and drop rates that
``tests/test_connection_loss.py`` runs (8,000 rollouts a point, 30 tool calls).

    .venv/bin/python -m docs.scripts.engines
"""

from __future__ import annotations

from functools import cache

from docs.scripts.markdown import Quote, percent, table
from models.loading import load_scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analysis.stats import mean_ci95, ratio_ci95
from sim.analytic.agent.engine import Expectation, expect
from sim.des.runners import simulate
from sim.turn.records import RolloutRecords
from sim.turn.transports import Transport

ROLLOUTS = 20_000
SWEEP_ROLLOUTS = 8_000
ANALYTIC_PAGE = "docs/model/analytic.md"

PRESETS = (
    ("codex-spark", Transport.HTTP),
    ("codex-spark", Transport.WS),
    ("codex-spark", Transport.WS_APPEND),
    ("gpt5-flagship", Transport.HTTP),
    ("gpt5-flagship", Transport.WS),
)

CALLS = "workload.tool_calls_per_rollout=30"
APPROXIMATIONS = (
    (
        "parallel classifiers slower than prefill",
        Transport.HTTP,
        ("safety.parallel_per_1k_tokens_ms=3",),
    ),
    (
        "lifetime 13 s, no drops",
        Transport.WS,
        (CALLS, "connection.ws_lifetime_s=13", "connection.ws_drops_per_hour=0"),
    ),
    ("lifetime 5 s", Transport.WS, (CALLS, "connection.ws_lifetime_s=5")),
    ("60 drops per hour", Transport.WS, (CALLS, "connection.ws_drops_per_hour=60")),
    (
        "120 drops per hour, store=false",
        Transport.WS,
        (CALLS, "connection.ws_drops_per_hour=120", "connection.store=false"),
    ),
)
SWEEP = ((5, 0, True), (12, 0, True), (13, 0, True), (30, 60, True), (120, 120, True))
SWEEP += ((3600, 0, True), (3600, 120, True), (8, 30, False))
"""(lifetime s, drops per hour, store) of the connection sweep."""


@cache
def des(
    preset: str, transport: Transport, *overrides: str, rollouts: int = ROLLOUTS
) -> RolloutRecords:
    return simulate(load_scenario(preset, list(overrides)), transport, rollouts)


@cache
def analytic(preset: str, transport: Transport, *overrides: str) -> Expectation:
    return expect(load_scenario(preset, list(overrides)), transport)


def agreement() -> str:
    body = []
    for preset, transport in PRESETS:
        records, expected = des(preset, transport), analytic(preset, transport)
        low, high = mean_ci95(records.e2e_s)
        mean = float(records.e2e_s.mean())
        body.append(
            [
                f"`{preset}:{transport.value}`",
                f"{mean:.3f} [{low:.3f}, {high:.3f}]",
                f"{expected.e2e_s:.3f}",
                f"{mean / expected.e2e_s:.4f}",
                f"{records.turns.mean():.3f}",
                f"{expected.turns:.3f}",
            ]
        )
    header = ["spec", "DES e2e (s), 95% CI", "analytic e2e (s)", "DES / analytic"]
    return table([*header, "DES turns", "expected turns"], body)


def approximations() -> str:
    safety = STAGE_COLUMN[Stage.SAFETY]
    body = []
    for label, transport, overrides in APPROXIMATIONS:
        records, expected = (
            des("codex-spark", transport, *overrides),
            analytic("codex-spark", transport, *overrides),
        )
        names = ", ".join(f"`{name}`" for name in expected.approximations)
        if transport is Transport.HTTP:
            per_turn = records.stage_s[:, safety].sum() / records.turns.sum() * 1000
            low, high = (1000 * x for x in ratio_ci95(records.stage_s[:, safety], records.turns))
            quantity, shown = "`safety` per turn (ms)", f"{per_turn:.2f} [{low:.2f}, {high:.2f}]"
            value = f"{expected.stage_s[safety] / expected.turns * 1000:.2f}"
        else:
            low, high = mean_ci95(records.cold_turns)
            quantity = "connections per rollout"
            shown = f"{records.cold_turns.mean():.3f} [{low:.3f}, {high:.3f}]"
            value = f"{expected.cold_turns:.3f}"
        body.append([label, quantity, shown, value, names])
    header = ["case (`codex-spark`)", "quantity", "DES, 95% CI", "analytic", "approximations"]
    return table(header, body)


def sweep_overrides(lifetime_s: float, drops: float, store: bool) -> tuple[str, ...]:
    return (
        CALLS,
        f"connection.ws_lifetime_s={lifetime_s}",
        f"connection.ws_drops_per_hour={drops}",
        f"connection.store={str(store).lower()}",
    )


def connection_sweep() -> str:
    body = []
    for lifetime_s, drops, store in SWEEP:
        overrides = sweep_overrides(lifetime_s, drops, store)
        records = des("codex-spark", Transport.WS, *overrides, rollouts=SWEEP_ROLLOUTS)
        expected = analytic("codex-spark", Transport.WS, *overrides)
        e2e_low, e2e_high = mean_ci95(records.e2e_s)
        cold_low, cold_high = mean_ci95(records.cold_turns)
        body.append(
            [
                f"{lifetime_s:,}",
                f"{drops}",
                str(store).lower(),
                f"{records.e2e_s.mean():.3f} [{e2e_low:.3f}, {e2e_high:.3f}]",
                f"{expected.e2e_s:.3f}",
                f"{records.cold_turns.mean():.3f} [{cold_low:.3f}, {cold_high:.3f}]",
                f"{expected.cold_turns:.3f}",
            ]
        )
    header = ["lifetime (s)", "drops per hour", "store", "DES e2e (s), 95% CI", "analytic e2e (s)"]
    return table([*header, "DES connections, 95% CI", "analytic connections"], body)


BLOCKS = {
    "agreement": agreement,
    "approximations": approximations,
    "connection-sweep": connection_sweep,
}


def quotes() -> list[Quote]:
    ratios = [float(des(p, t).e2e_s.mean() / analytic(p, t).e2e_s) - 1 for p, t in PRESETS]
    return [
        (
            ANALYTIC_PAGE,
            "The DES means of the first table sit {}–{} above the analytic ones at this seed",
            (f"{min(ratios) * 100:.1f}", percent(max(ratios), 1)),
        ),
        (
            ANALYTIC_PAGE,
            "{} turns per rollout against the expected {},",
            (
                f"{des('codex-spark', Transport.HTTP).turns.mean():.2f}",
                f"{analytic('codex-spark', Transport.HTTP).turns:.2f}",
            ),
        ),
    ]


def main() -> None:
    for block in BLOCKS.values():
        print(block())
        print()


if __name__ == "__main__":
    main()
