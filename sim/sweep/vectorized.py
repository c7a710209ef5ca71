"""The analytic engine over many points at once: equal to ``sim.analytic.expect`` point by point.

Points are grouped by the two switches the transports branch on
(``api.config_cache``, ``connection.store``) and evaluated 64 at a time.  In a
batch, every numeric scenario field becomes a (points, 1) column and every
per-turn array has shape (points, turns): a row lays out one point's expected
rollouts (one per value of its tool-call distribution) end to end, padded to
the longest row.  The core's ``turn_work`` and ``stage_costs`` evaluate the
whole batch in one pass; expected turns and the cold-connection probability
are the core's formulas with a leading points axis, their cumulative sums
running along each row as point by point, and padding carries zero weight.
A batch that cannot be stacked falls back to point-by-point evaluation, which
also isolates failing points.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np
from pydantic import BaseModel

from models.costs import TurnCosts, stage_costs
from models.scenario import Scenario
from models.stages import STAGES
from sim.engine.analytic import Expectation, expect
from sim.engine.transports import Transport, turn_work
from sim.engine.turns import Turns

BATCH_POINTS = 64
"""Points evaluated together: (points x turns) arrays stay small enough for the CPU cache."""

Support = tuple[np.ndarray, np.ndarray]
"""Values of the tool-call distribution and their probabilities."""


@dataclass(frozen=True)
class StackedTurns(Turns):
    """Expected turns of many points: one row per point, padded to the longest row.

    ``rollout_start`` is the column where each turn's rollout starts,
    ``weight`` the probability of that rollout (0 on padding) and ``length``
    the real turns of each row; ``offsets`` spans a whole row.
    """

    rollout_start: np.ndarray
    weight: np.ndarray
    length: np.ndarray

    @property
    def count(self) -> int:
        """Turns per row: the transports' per-turn arrays broadcast against the rows."""
        return int(self.turn_index.shape[-1])


def expect_many(
    scenarios: Sequence[Scenario], transport: Transport
) -> list[Expectation | Exception]:
    """Expected per-rollout budget of every scenario; a point that fails gets its exception."""
    results: list[Expectation | Exception | None] = [None] * len(scenarios)
    groups: dict[tuple[bool, bool], list[tuple[int, Support]]] = defaultdict(list)
    for index, scenario in enumerate(scenarios):
        try:
            support = scenario.workload.tool_calls_per_rollout.support()
        except Exception as error:
            results[index] = error
            continue
        groups[(scenario.api.config_cache, scenario.connection.store)].append((index, support))
    for members in groups.values():
        members.sort(key=lambda member: _layout(tuple(member[1][0])).size)
        for first in range(0, len(members), BATCH_POINTS):
            batch = members[first : first + BATCH_POINTS]
            group = [scenarios[index] for index, _ in batch]
            try:
                evaluated = _expect_group(group, [support for _, support in batch], transport)
            except Exception:
                evaluated = [_expect_one(scenario, transport) for scenario in group]
            for (index, _), result in zip(batch, evaluated, strict=True):
                results[index] = result
    return results


def _expect_one(scenario: Scenario, transport: Transport) -> Expectation | Exception:
    try:
        return expect(scenario, transport)
    except Exception as error:
        return error


def _expect_group(
    group: list[Scenario], supports: list[Support], transport: Transport
) -> list[Expectation]:
    stacked = stack(group)
    turns = expected_turns(group, supports)
    shape = turns.weight.shape
    cold_work, warm_work = turn_work(stacked, transport, turns)
    warm = stage_costs(stacked, warm_work)
    cold_probability = _cold_probability(group, stacked, transport, turns, warm)
    costs = stage_costs(stacked, cold_work.blend(warm_work, cold_probability))
    rows = np.arange(len(group))

    def per_rollout(values: np.ndarray) -> np.ndarray:
        weighted = np.where(turns.weight > 0, turns.weight * np.broadcast_to(values, shape), 0.0)
        return np.cumsum(weighted, axis=1)[rows, turns.length - 1]

    stage_s = np.stack([per_rollout(costs.stage_s[stage]) for stage in STAGES], axis=1)
    cold_turns = per_rollout(cold_probability)
    ttft_sum_s = per_rollout(costs.ttft_s)
    api_cpu_s = per_rollout(costs.api_cpu_s)
    safety_cpu_s = per_rollout(costs.safety_cpu_s)
    return [
        Expectation(
            stage_s=stage_s[p].copy(),
            turns=float(probability @ (calls + 1)),
            cold_turns=float(cold_turns[p]),
            ttft_sum_s=float(ttft_sum_s[p]),
            api_cpu_s=float(api_cpu_s[p]),
            safety_cpu_s=float(safety_cpu_s[p]),
        )
        for p, (calls, probability) in enumerate(supports)
    ]


class _Unstacked:
    """Stands for a field that is not stacked (it differs between points, or is a table).

    The core's cost functions read numbers and switches only; any use of this
    raises, and the batch falls back to point-by-point evaluation.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attribute: str) -> Any:
        raise TypeError(f"{self.name} is not stacked")

    def __bool__(self) -> bool:
        raise TypeError(f"{self.name} is not stacked")

    def __float__(self) -> float:
        raise TypeError(f"{self.name} is not stacked")


def stack(group: Sequence[Scenario]) -> SimpleNamespace:
    """A scenario-shaped namespace: numbers as (points, 1) columns, equal switches shared."""

    def column(name: str, values: list[Any]) -> Any:
        first = values[0]
        if isinstance(first, int | float) and not isinstance(first, bool):
            return np.array(values, dtype=float)[:, None]
        if isinstance(first, bool | str) and all(v == first for v in values):
            return first
        return _Unstacked(name)

    sections = {}
    for name in Scenario.model_fields:
        first = getattr(group[0], name)
        if isinstance(first, BaseModel):
            parts = [getattr(scenario, name) for scenario in group]
            sections[name] = SimpleNamespace(
                **{
                    field: column(f"{name}.{field}", [getattr(part, field) for part in parts])
                    for field in type(first).model_fields
                }
            )
        else:
            sections[name] = column(name, [getattr(scenario, name) for scenario in group])
    return SimpleNamespace(**sections)


@dataclass(frozen=True)
class _Layout:
    """The turns of one tool-call support's rollouts laid end to end."""

    turn_index: np.ndarray
    rollout_start: np.ndarray
    rollout: np.ndarray
    """Index of each turn's rollout (its value in the support)."""
    is_last: np.ndarray

    @property
    def size(self) -> int:
        return int(self.turn_index.size)


@cache
def _layout(calls: tuple[float, ...]) -> _Layout:
    turns_per_rollout = np.asarray(calls).astype(np.int64) + 1
    offsets = np.concatenate([[0], np.cumsum(turns_per_rollout)])
    rollout_start = np.repeat(offsets[:-1], turns_per_rollout)
    is_last = np.zeros(offsets[-1])
    is_last[offsets[1:] - 1] = 1.0
    return _Layout(
        turn_index=np.arange(offsets[-1]) - rollout_start,
        rollout_start=rollout_start,
        rollout=np.repeat(np.arange(len(calls)), turns_per_rollout),
        is_last=is_last,
    )


def expected_turns(group: Sequence[Scenario], supports: list[Support]) -> StackedTurns:
    """``sim.analytic.expected_turns`` for many points, one row each (see ``StackedTurns``)."""
    layouts = [_layout(tuple(calls)) for calls, _ in supports]
    length = np.array([layout.size for layout in layouts])
    shape = (len(group), int(length.max()))
    turn_index = np.zeros(shape)
    rollout_start = np.broadcast_to(np.arange(shape[1]), shape).copy()
    is_last = np.zeros(shape)
    weight = np.zeros(shape)
    for row, (layout, (_, probability)) in enumerate(zip(layouts, supports, strict=True)):
        turn_index[row, : layout.size] = layout.turn_index
        rollout_start[row, : layout.size] = layout.rollout_start
        is_last[row, : layout.size] = layout.is_last
        weight[row, : layout.size] = probability[layout.rollout]

    def column(values: list[float]) -> np.ndarray:
        return np.broadcast_to(np.array(values, dtype=float)[:, None], shape)

    tool_s, tool_output = [], []
    for scenario in group:
        tools = scenario.workload.tools
        weights = np.array([tool.weight for tool in tools])
        weights = weights / weights.sum()
        tool_s.append(float(weights @ [tool.time_s.mean for tool in tools]))
        tool_output.append(float(weights @ [tool.output_tokens.mean for tool in tools]))
    workloads = [scenario.workload for scenario in group]
    last = is_last.astype(bool)
    tool_s_turns = np.where(last, 0.0, column(tool_s))
    tool_output_turns = np.where(last, 0.0, column(tool_output))
    output = column([w.output_tokens.mean for w in workloads])
    first_message = column([w.first_message_tokens for w in workloads])[:, :1]
    items_per_turn = column([w.output_items_per_turn for w in workloads])[:, :1]

    added = output + tool_output_turns
    before = np.cumsum(added, axis=1) - added
    added_before_turn = before - np.take_along_axis(before, rollout_start, axis=1)
    previous_tool_output = np.zeros(shape)
    previous_tool_output[:, 1:] = tool_output_turns[:, :-1]
    new_tokens = np.where(turn_index == 0, first_message, previous_tool_output)
    context = first_message + added_before_turn
    return StackedTurns(
        offsets=np.array([0, shape[1]]),
        turn_index=turn_index,
        is_last=is_last,
        fixed_tokens=np.array(
            [w.instructions_tokens + w.tool_definitions_tokens for w in workloads]
        )[:, None],
        new_tokens=new_tokens,
        prior_tokens=context - new_tokens,
        items_new=np.ones(shape[1]),
        context_items=1.0 + turn_index * (items_per_turn + 1.0),
        output_tokens=output,
        decode_s_per_token=column([s.inference.decode_tps.mean_reciprocal() for s in group]),
        tool_s=tool_s_turns,
        render_hit=column([s.api.render_cache_hit_prob for s in group]),
        rollout_start=rollout_start,
        weight=weight,
        length=length,
    )


def _cold_probability(
    group: Sequence[Scenario],
    stacked: SimpleNamespace,
    transport: Transport,
    turns: StackedTurns,
    warm: TurnCosts,
) -> np.ndarray:
    """``sim.engine.analytic``'s probability that a turn starts on a new connection, per point."""
    first = turns.turn_index == 0
    if not transport.is_websocket:
        expired = []
        for scenario in group:
            tools = scenario.workload.tools
            weights = np.array([tool.weight for tool in tools])
            idle_s = scenario.client.keepalive_idle_s
            survival = np.array([tool.time_s.survival(idle_s) for tool in tools])
            expired.append(float(weights @ survival / weights.sum()))
        return np.where(first, 1.0, np.array(expired)[:, None])
    connection = stacked.connection
    shape = turns.weight.shape
    turn_s = np.broadcast_to(warm.turn_s, shape)
    interval_s = np.concatenate([np.zeros((shape[0], 1)), turn_s[:, :-1]], axis=1)
    elapsed_s = np.cumsum(interval_s, axis=1)
    starts_s = elapsed_s - np.take_along_axis(elapsed_s, turns.rollout_start, axis=1)
    previous_starts_s = np.concatenate([np.zeros((shape[0], 1)), starts_s[:, :-1]], axis=1)
    survived_drop = np.exp(-connection.ws_drops_per_hour / 3600.0 * interval_s)
    lifetime_s = connection.ws_lifetime_s
    rotated = np.floor(starts_s / lifetime_s) > np.floor(previous_starts_s / lifetime_s)
    cold = 1.0 - survived_drop * (1.0 - rotated)
    return np.where(first, 1.0, cold)
