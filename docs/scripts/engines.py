"""The DES against the analytic engine, as docs/model.md reports it.

Prints two Markdown tables: mean end-to-end time and turns per rollout of
the presets (DES with 20,000 rollouts at the preset seed, and the analytic
expectation), then the cases where the analytic engine's approximations
apply (the WebSocket cases with 30 tool calls, so that the turn-count draw
does not move the connection count).

    .venv/bin/python docs/scripts/engines.py
"""

from __future__ import annotations

from models.loading import load_scenario
from models.stages import STAGES, Stage
from sim.analysis.stats import mean_ci95, ratio_ci95
from sim.engine.analytic import expect
from sim.engine.runners import simulate
from sim.engine.transports import Transport

ROLLOUTS = 20_000

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


def agreement() -> str:
    lines = [
        "| spec | DES e2e (s), 95% CI | analytic e2e (s) | DES / analytic "
        "| DES turns | expected turns |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for preset, transport in PRESETS:
        scenario = load_scenario(preset)
        records = simulate(scenario, transport, ROLLOUTS)
        expected = expect(scenario, transport)
        low, high = mean_ci95(records.e2e_s)
        des = float(records.e2e_s.mean())
        lines.append(
            f"| `{preset}:{transport.value}` | {des:.3f} [{low:.3f}, {high:.3f}] "
            f"| {expected.e2e_s:.3f} | {des / expected.e2e_s:.4f} "
            f"| {records.turns.mean():.3f} | {expected.turns:.3f} |"
        )
    return "\n".join(lines)


def approximations() -> str:
    safety = STAGES.index(Stage.SAFETY)
    lines = [
        "| case (`codex-spark`) | quantity | DES, 95% CI | analytic | approximations |",
        "| --- | --- | --- | --- | --- |",
    ]
    for label, transport, overrides in APPROXIMATIONS:
        scenario = load_scenario("codex-spark", list(overrides))
        records = simulate(scenario, transport, ROLLOUTS)
        expected = expect(scenario, transport)
        names = ", ".join(f"`{name}`" for name in expected.approximations)
        if transport is Transport.HTTP:
            per_turn = records.stage_s[:, safety].sum() / records.turns.sum() * 1000
            low, high = (1000 * x for x in ratio_ci95(records.stage_s[:, safety], records.turns))
            analytic = expected.stage_s[safety] / expected.turns * 1000
            quantity, des = "`safety` per turn (ms)", f"{per_turn:.2f} [{low:.2f}, {high:.2f}]"
            value = f"{analytic:.2f}"
        else:
            low, high = mean_ci95(records.cold_turns)
            quantity = "connections per rollout"
            des = f"{records.cold_turns.mean():.3f} [{low:.3f}, {high:.3f}]"
            value = f"{expected.cold_turns:.3f}"
        lines.append(f"| {label} | {quantity} | {des} | {value} | {names} |")
    return "\n".join(lines)


def main() -> None:
    print(agreement())
    print()
    print(approximations())


if __name__ == "__main__":
    main()
