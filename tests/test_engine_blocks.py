"""A column form larger than a block is evaluated block by block, with the same bits.

``expect_columns`` splits more than ``BLOCK_POINTS`` points into blocks (to keep
its temporaries small); a point's results must not depend on that.  Here the
block is made tiny, and points of every single-agent preset, with and without
compaction, KV residency, a connection kept across rollouts and WebSocket
rotation, are evaluated in blocks and all at once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.loading import load_scenario, preset_names, raw_scenario
from sim.analytic.agent import engine
from sim.analytic.agent.columns import column_form
from sim.sweep.points import point_scenario
from sim.turn.transports import Transport

VARIANTS = [
    {},
    {"compaction.threshold_tokens": 60_000.0},
    {"kv_cache.residency": True},
    {"connection.reuse_across_rollouts": True},
    {"connection.ws_lifetime_s": 13.0, "inference.decode_tps": 300.0},
    {"inference.decode_tps": 4000.0, "connection.ws_drops_per_hour": 20.0},
]


def _scenarios() -> list:
    singles = [n for n in preset_names() if not load_scenario(n).on_fleet]
    base = raw_scenario("codex-spark")
    return [load_scenario(n) for n in singles] + [point_scenario(base, v) for v in VARIANTS]


@pytest.mark.parametrize("transport", list(Transport))
def test_blocks_give_every_point_the_bits_of_one_batch(monkeypatch, transport) -> None:
    columns = column_form(_scenarios())
    whole = engine.expect_columns(columns, transport)
    monkeypatch.setattr(engine, "BLOCK_POINTS", 3)
    blocked = engine.expect_columns(columns, transport)
    assert blocked.approximations == whole.approximations
    for field in dataclasses.fields(whole):
        if field.name != "approximations":
            np.testing.assert_array_equal(getattr(blocked, field.name), getattr(whole, field.name))
