"""The partner presets load and their results at the preset's seed are pinned.

The values pin the presets as written from public descriptions; they are not
required to land inside the published ranges (docs/calibration.md, section 9).
"""

from __future__ import annotations

import pytest
from support import scenario

from models.loading import preset_names
from sim.analytic.agent.engine import expect
from sim.des.runners import simulate
from sim.turn.transports import Transport

PINNED = [
    ("vercel-ai-sdk", "4.77680930496", "3.78502367807", "0.201964716548"),
    ("cline-multifile", "31.4550809161", "19.8732435443", "0.366324599822"),
    ("cursor-agent", "25.2994829362", "20.4275779943", "0.193399578147"),
    ("competitor-ws", "52.5201777142", "44.2477302664", "0.156765220775"),
]
"""(preset, DES mean e2e over 50 rollouts by HTTP and by WebSocket, analytic reduction)."""


def significant(value: float) -> str:
    return f"{value:.12g}"


@pytest.mark.parametrize(("preset", "http_s", "ws_s", "reduction"), PINNED)
def test_each_partner_preset_loads_and_its_pinned_result_holds(
    preset: str, http_s: str, ws_s: str, reduction: str
) -> None:
    assert preset in preset_names()
    s = scenario(preset)
    assert significant(float(simulate(s, Transport.HTTP, 50).e2e_s.mean())) == http_s
    assert significant(float(simulate(s, Transport.WS, 50).e2e_s.mean())) == ws_s
    found = 1 - expect(s, Transport.WS).e2e_s / expect(s, Transport.HTTP).e2e_s
    assert significant(found) == reduction
