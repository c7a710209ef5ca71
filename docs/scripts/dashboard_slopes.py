"""The scaling view's slopes as docs/dashboard.md quotes them: the local log-log slope of
API work per rollout at 20 and 80 tool calls on codex-spark (``sim.dashboard.slopes``, the
function the caption calls).

    .venv/bin/python -m docs.scripts.dashboard_slopes
"""

from __future__ import annotations

from docs.scripts.markdown import Quote, show
from models.loading import load_scenario
from sim.dashboard.slopes import slopes
from sim.turn.transports import Transport

PAGE = "docs/dashboard.md"


def quotes() -> list[Quote]:
    measured = slopes(load_scenario("codex-spark"), (Transport.HTTP, Transport.WS))
    (http_20, http_80), (ws_20, ws_80) = measured.values()
    return [
        (
            PAGE,
            "so its log-log slope is {} at 20 calls and {} at 80 and tends to 2 only as "
            "rollouts grow long; WebSocket mode's is {} and {}.",
            tuple(f"{v:.2f}" for v in (http_20, http_80, ws_20, ws_80)),
        )
    ]


if __name__ == "__main__":
    show(quotes())
