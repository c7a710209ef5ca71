"""The tools' times and outputs of one rollout: the simulation's draws, then more of the same.

The first call of each turn the scenario drew takes that turn's drawn time and
output (the simulation's streams: common random numbers, so a rollout against
the emulator is the simulation's rollout).  A server that decides for itself may
ask for more calls in a response, or for more turns, than the scenario drew: each
further call takes a draw of the tool it names (of the tool mix when the
scenario has no tool of that name) from a stream of the rollout's own, so the
same rollout against the same server draws the same times.
"""

from __future__ import annotations

import numpy as np

from models.scenario import Scenario
from sim.des.streams import BLOCK_ROLLOUTS
from sim.testbed.script import block_turns
from sim.turn.turns import Turns

_FURTHER_CALLS_KEY = 1_000
"""Spawn key of the further calls' streams, apart from every ``Draw`` kind of the DES."""


class ToolDraws:
    """Drawn (seconds, output tokens) of each tool call of one rollout."""

    def __init__(self, scenario: Scenario, turns: Turns, rollout: int, replication: int) -> None:
        block, local = divmod(rollout, BLOCK_ROLLOUTS)
        self._turns = turns
        self._first, self._end = int(turns.offsets[local]), int(turns.offsets[local + 1])
        self._tools = {tool.name: tool for tool in scenario.workload.tools}
        self._mix = scenario.workload
        key = (block, _FURTHER_CALLS_KEY, replication, local)
        self._rng = np.random.Generator(
            np.random.PCG64(np.random.SeedSequence(scenario.seed, spawn_key=key))
        )

    @property
    def drawn_turns(self) -> int:
        """Turns of the rollout as the scenario drew it (its tool-calling turns plus one)."""
        return self._end - self._first

    def call(self, turn: int, index: int, name: str) -> tuple[float, float]:
        """The ``index``-th call of turn ``turn``, to the tool named ``name``."""
        row = self._first + turn
        if index == 0 and row < self._end - 1:
            return float(self._turns.tool_s[row]), float(self._turns.new_tokens[row + 1])
        tool = self._tools.get(name)
        if tool is None:
            kinds = self._mix.tools
            tool = kinds[int(self._rng.choice(len(kinds), p=self._mix.tool_probabilities()))]
        seconds = float(tool.time_s.sample(self._rng, 1)[0])
        return seconds, float(tool.output_tokens.sample(self._rng, 1)[0])


class DrawnBlocks:
    """The drawn turns of each block of rollouts, drawn once."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._turns: dict[tuple[int, int], Turns] = {}

    def of(self, rollout: int, replication: int) -> Turns:
        key = (replication, rollout // BLOCK_ROLLOUTS)
        if key not in self._turns:
            self._turns[key] = block_turns(self.scenario, key[1], replication)
        return self._turns[key]

    def tools(self, rollout: int, replication: int) -> ToolDraws:
        return ToolDraws(self.scenario, self.of(rollout, replication), rollout, replication)
