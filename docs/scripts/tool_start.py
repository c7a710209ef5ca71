"""The post-inference work a tool started on its call item hides, as docs/model/latency.md
quotes it.

.venv/bin/python -m docs.scripts.tool_start
"""

from __future__ import annotations

from docs.scripts.markdown import Quote, show
from models.loading import load_scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analytic.agent.engine import expect
from sim.turn.transports import Transport

PRESET = "codex-spark"


def quotes() -> list[Quote]:
    post = STAGE_COLUMN[Stage.POST]
    completed = expect(load_scenario(PRESET), Transport.HTTP)
    on_item = expect(
        load_scenario(PRESET, ["client.tool_starts_on_call_item=true"]), Transport.HTTP
    )
    saved_s = completed.e2e_s - on_item.e2e_s
    return [
        (
            "docs/model/latency.md",
            "At codex-spark it saves HTTP about {} s per rollout of its {} s of post",
            (f"{saved_s:.2f}", f"{completed.stage_s[post]:.2f}"),
        )
    ]


if __name__ == "__main__":
    show(quotes())
