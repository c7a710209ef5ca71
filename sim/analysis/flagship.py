"""The "65 tokens/s flagship" case, defined once: the codex-spark rollout (its workload,
post-sprint API and network) decoding at a constant 65 tokens/s, the speed GPT-5-class
flagships show through the API, everything else at the preset.

The README, the dashboard's Amdahl view, the ``plot --mark 65`` label of the Amdahl sweep
and lesson 1 all quote its end-to-end reduction; a test checks that they agree.  (The
``gpt5-flagship`` preset differs: its hardware profile also prefills more slowly.)
"""

from __future__ import annotations

from functools import cache

from models.loading import load_scenario
from models.published import FLAGSHIP_DECODE_TPS
from models.scenario import Scenario
from sim.analytic.agent.engine import expect
from sim.turn.transports import Transport

FLAGSHIP_PRESET = "codex-spark"
FLAGSHIP_OVERRIDES = (f"inference.decode_tps={FLAGSHIP_DECODE_TPS}",)
"""The preset and the ``--set`` that make the case (``loopbudget compare
codex-spark:http codex-spark:ws --engine analytic --set inference.decode_tps=65.0``)."""


def flagship_scenario() -> Scenario:
    return load_scenario(FLAGSHIP_PRESET, list(FLAGSHIP_OVERRIDES))


@cache
def flagship_reduction() -> float:
    """The end-to-end reduction of ws over http in the flagship case (analytic engine)."""
    scenario = flagship_scenario()
    http, ws = (expect(scenario, transport) for transport in (Transport.HTTP, Transport.WS))
    return 1.0 - ws.e2e_s / http.e2e_s


def flagship_sentence() -> str:
    """The case and its number, as the front-ends quote it."""
    return (
        f"The {FLAGSHIP_DECODE_TPS:.0f} tokens/s flagship (the codex-spark rollout decoding at "
        f"a constant {FLAGSHIP_DECODE_TPS:.0f} tokens/s): ws saves {flagship_reduction():.1%} "
        "end to end."
    )
