"""The scripted model: what the emulated model emits at each turn of a rollout, and how fast.

It follows the scenario's workload through the DES's own seeded draws
(``sim.des.draws``), so a rollout of the testbed and the same rollout of the
simulation see the same tool calls, output tokens and decode rates (common
random numbers).  A rollout is named by the client in the request's
``metadata`` (``loopbudget_rollout``, ``loopbudget_replication``); the turn is
the number of tool outputs in the conversation.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from models.scenario import Scenario
from sim.des.draws import draw_turns
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.turns import Turns

ROLLOUT_KEY = "loopbudget_rollout"
REPLICATION_KEY = "loopbudget_replication"
_CACHED_BLOCKS = 8


@dataclass(frozen=True)
class TurnPlan:
    """What the model does at one turn."""

    output_tokens: float
    decode_s_per_token: float
    render_hit: bool
    is_last: bool
    tool_name: str
    """The tool it calls ('' on the last turn, which answers in text)."""


def block_turns(scenario: Scenario, block: int, replication: int) -> Turns:
    """All drawn turns of one block of rollouts (what the client and the model both follow)."""
    return draw_turns(scenario, block, BLOCK_ROLLOUTS, replication)


class Script:
    """Turn plans by (replication, rollout, turn), drawn a block at a time."""

    def __init__(self, scenario: Scenario) -> None:
        self._scenario = scenario
        self._blocks: OrderedDict[tuple[int, int], Turns] = OrderedDict()

    def _block(self, block: int, replication: int) -> Turns:
        key = (replication, block)
        if key not in self._blocks:
            self._blocks[key] = block_turns(self._scenario, block, replication)
            if len(self._blocks) > _CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        self._blocks.move_to_end(key)
        return self._blocks[key]

    def turn(self, rollout: int, turn: int, replication: int = 0) -> TurnPlan:
        """The plan of ``turn`` of ``rollout``; past the last turn the model keeps answering."""
        block, local = divmod(rollout, BLOCK_ROLLOUTS)
        turns = self._block(block, replication)
        first, end = int(turns.offsets[local]), int(turns.offsets[local + 1])
        row = min(first + turn, end - 1)
        is_last = row == end - 1
        assert turns.tool_kind is not None, "drawn turns name their tools"
        kind = int(turns.tool_kind[row])
        return TurnPlan(
            output_tokens=float(turns.output_tokens[row]),
            decode_s_per_token=float(turns.decode_s_per_token[row]),
            render_hit=bool(turns.render_hit[row]),
            is_last=is_last,
            tool_name="" if is_last else self._scenario.workload.tools[kind].name,
        )
