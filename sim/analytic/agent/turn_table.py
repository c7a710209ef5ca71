"""The expected rollout turn by turn, and the re-prefill of history a replica no longer holds.

The engine sums a rollout from its turns (``sim.analytic.agent.layout``:
``rollout_sum`` and ``per_turn`` read the same probes).  The residency and
rate-limit models need the turns themselves: how long each turn's request
and tool take, the history it continues and the history it leaves, each given
that the turn is reached.  A ``TurnTable`` holds them for one point, computed
with every history held.

Every cost is linear in the history tokens a replica no longer holds
(``models.costs.reprefill_s``), so the residency models give each turn's
expected missing tokens and ``with_missing`` adds their prefill to the
rollout: ``inference.prefix_cache_hit_fraction`` of them is prefilled again,
moving from the cached to the uncached prompt tokens.  What the longer prefill
does to the parallel classifiers' excess and to a WebSocket turn's duration
(its drop probability) is left out; results with residency list
``prefix_residency`` among their approximations.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.stages import STAGE_COLUMN, STAGES, Stage
from sim.analytic.agent.expectations import Expectations, stitch
from sim.analytic.agent.layout import TurnCount

TTFT, API_CPU, SAFETY_CPU, CACHED, UNCACHED = range(len(STAGES), len(STAGES) + 5)
"""Columns after the stages in a quantity matrix."""
QUANTITIES = UNCACHED + 1


@dataclass(frozen=True)
class TurnTable:
    """One point's expected rollout, one entry per turn of its longest rollout."""

    reach: np.ndarray
    """P(the rollout reaches turn k)."""
    last: np.ndarray
    """P(turn k is the final answer | reached)."""
    cold: np.ndarray
    """P(turn k opens a connection | reached)."""
    quantities: np.ndarray
    """Shape (turns, QUANTITIES): every stage, TTFT, API and safety work, cached and uncached
    prompt tokens of turn k given that it is reached."""
    prior_tokens: np.ndarray
    """History (conversation before the new input) turn k continues."""
    history_tokens: np.ndarray
    """History written back after turn k: its context and its output."""
    tool_s: Any
    """The distribution of a tool-calling turn's tool time."""
    growth_variance: float
    """Variance of the tokens a tool-calling turn adds to the history (output and tools)."""
    output_variance: float
    """Variance of one turn's output tokens."""

    def stage_s(self, stage: Stage) -> np.ndarray:
        return self.quantities[:, STAGE_COLUMN[stage]]

    def history_variances(self) -> np.ndarray:
        """Variance of the history written after each turn k: the outputs of turns 0 .. k
        and the tool results of turns 0 .. k - 1 (turn k's result comes with the next
        request), so k turns' growth and one output."""
        return np.arange(self.reach.size) * self.growth_variance + self.output_variance

    def prior_variances(self) -> np.ndarray:
        """Variance of the history each turn continues: the one written after the turn
        before (none before the first)."""
        return np.concatenate([[0.0], self.history_variances()[:-1]])

    @property
    def turns(self) -> float:
        return float(self.reach.sum())

    @property
    def request_s(self) -> np.ndarray:
        """Each turn's request: every stage but the tool."""
        return self.quantities[:, : len(STAGES)].sum(axis=1) - self.stage_s(Stage.TOOL)


@dataclass(frozen=True)
class TurnParts:
    """Every point's expectation, and its turns (points, turns) given they are reached."""

    expectations: Expectations
    per_turn_of: Callable[[], np.ndarray]
    """Computes ``per_turn``: only the residency and rate-limit models read the turns, and
    a sweep's points would pay for them all (a third of the engine on the Amdahl sweep)."""
    count: TurnCount
    cold: np.ndarray
    tokens_of: Callable[[], tuple[np.ndarray, np.ndarray]]
    """Computes ``prior_tokens`` and ``history_tokens`` (points, turns): only the residency
    models read them."""

    @functools.cached_property
    def per_turn(self) -> np.ndarray:
        """Shape (points, turns, QUANTITIES): each turn's quantities given it is reached."""
        return self.per_turn_of()

    @functools.cached_property
    def _tokens(self) -> tuple[np.ndarray, np.ndarray]:
        return self.tokens_of()

    @property
    def prior_tokens(self) -> np.ndarray:
        """History (conversation before the new input) each turn continues."""
        return self._tokens[0]

    @property
    def history_tokens(self) -> np.ndarray:
        """History written back after each turn: its context and its output."""
        return self._tokens[1]

    def table(self, point: int, draws: Any) -> TurnTable:
        """The turns of one point, up to its longest rollout; ``draws`` are the points'
        ``ExpectedDraws``."""
        length = int(np.flatnonzero(self.count.reach[point] > 0).max()) + 1
        cut = slice(0, length)
        return TurnTable(
            reach=self.count.reach[point, cut],
            last=self.count.last[point, cut],
            cold=self.cold[point, cut],
            quantities=self.per_turn[point, cut],
            prior_tokens=self.prior_tokens[point, cut],
            history_tokens=self.history_tokens[point, cut],
            tool_s=_value(draws.tool_time_s, point),
            growth_variance=float(
                _value(draws.output_tokens, point).variance
                + _value(draws.tool_output_tokens, point).variance
            ),
            output_variance=float(_value(draws.output_tokens, point).variance),
        )

    @staticmethod
    def stitch(pieces: list[tuple[np.ndarray, TurnParts]], points: int) -> TurnParts:
        """One ``TurnParts`` of the points of ``pieces`` (each: its rows and their parts)."""
        width = max(part.count.reach.shape[1] for _, part in pieces)

        def padded(name: str, fill: float, source: str = "") -> np.ndarray:
            first = _field(pieces[0][1], name, source)
            out = np.full((points, width, *first.shape[2:]), fill)
            for rows, part in pieces:
                value = _field(part, name, source)
                out[rows, : value.shape[1]] = value
            return out

        count = TurnCount(reach=padded("reach", 0.0, "count"), last=padded("last", 1.0, "count"))
        return TurnParts(
            expectations=stitch([(rows, part.expectations) for rows, part in pieces], points),
            per_turn_of=lambda: padded("per_turn", 0.0),
            count=count,
            cold=padded("cold", 1.0),
            tokens_of=lambda: (padded("prior_tokens", 0.0), padded("history_tokens", 0.0)),
        )


def _value(column: Any, point: int) -> Any:
    """One point's value of an ``ObjectColumn``."""
    return column.values[column.index[point]]


def _field(part: TurnParts, name: str, source: str) -> np.ndarray:
    holder = getattr(part, source) if source else part
    return np.asarray(getattr(holder, name))


def with_missing(
    expectations: Expectations, tables: list[TurnTable], missing: list[np.ndarray], columns: Any
) -> Expectations:
    """The expectations with each turn's ``missing`` history tokens prefilled again."""
    f = columns.inference.prefix_cache_hit_fraction[:, 0]
    per_token_s = f / columns.inference.prefill_tps[:, 0]
    reprefilled = np.array(
        [float(table.reach @ tokens) for table, tokens in zip(tables, missing, strict=True)]
    )
    stage_s = expectations.stage_s.copy()
    stage_s[:, STAGE_COLUMN[Stage.PREFILL]] += per_token_s * reprefilled
    return dataclasses.replace(
        expectations,
        stage_s=stage_s,
        ttft_sum_s=expectations.ttft_sum_s + per_token_s * reprefilled,
        cached_prompt_tokens=expectations.cached_prompt_tokens - f * reprefilled,
        uncached_prompt_tokens=expectations.uncached_prompt_tokens + f * reprefilled,
    )
