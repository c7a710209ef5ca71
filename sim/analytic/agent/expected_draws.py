"""The distributions behind the DES's random draws, as the analytic engine reads them.

Per turn the DES draws output tokens, a decode rate, a tool kind and that
kind's time and output size (``sim.des.draws``).  Here each of those is a
column over points of distinct distributions; the tool kind is folded into
two mixtures over the tool mix (its time and its output size, truncated at
the cap, ``sim.analytic.agent.capped``), the marginal distributions of a tool call,
and the parallel calls of a turn into the
distribution of its slowest call and of its calls' outputs
(``sim.analytic.agent.parallel_tools``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from models.distributions import Mixture
from models.workload import ToolKind
from sim.analytic.agent.capped import capped
from sim.analytic.agent.columns import ObjectColumn
from sim.analytic.agent.decode_columns import constant_rates
from sim.analytic.agent.parallel_tools import turn_tool_output, turn_tool_time


@dataclass(frozen=True)
class ExpectedDraws:
    """Each random draw of a turn over points: its distribution and the means the turns use."""

    output_tokens: ObjectColumn[Any]
    decode_tps: ObjectColumn[Any]
    tool_time_s: ObjectColumn[Any]
    """The tool time of a tool-calling turn (one call: a mixture over the tool mix)."""
    tool_output_tokens: ObjectColumn[Any]
    """The tool output of a tool-calling turn (one call: a mixture over the tool mix)."""
    tool_calls: ObjectColumn[Any]
    mean_output_tokens: np.ndarray
    """Shape (points, 1), like every mean below."""
    decode_s_per_token: np.ndarray
    """E[1 / decode rate]."""
    mean_tool_s: np.ndarray
    mean_tool_output_tokens: np.ndarray
    mean_parallel_calls: np.ndarray
    parallel: np.ndarray
    """Per point: some turns call more than one tool (the tool time is a quadrature's)."""


def expected_draws(columns: Any) -> ExpectedDraws:
    """The draws of the scenarios in ``columns`` (a column form)."""
    w = columns.workload
    overhead_s = ObjectColumn.of_numbers(columns.client.parallel_call_overhead_ms[:, 0] * 1e-3)
    tool_time = ObjectColumn.zip(w.tools, w.parallel_calls_per_turn, overhead_s).convert(
        lambda parts: turn_tool_time(tool_mixture(parts[0], "time_s"), *parts[1:])
    )
    cap = ObjectColumn.of_numbers(columns.compaction.tool_output_cap_tokens[:, 0])
    tool_output = ObjectColumn.zip(w.tools, w.parallel_calls_per_turn, cap).convert(
        lambda parts: turn_tool_output(
            capped(tool_mixture(parts[0], "output_tokens"), parts[2]), parts[1]
        )
    )
    calls = w.parallel_calls_per_turn
    rates = constant_rates(columns.inference.decode_tps)
    return ExpectedDraws(
        output_tokens=w.output_tokens,
        decode_tps=columns.inference.decode_tps,
        tool_time_s=tool_time,
        tool_output_tokens=tool_output,
        tool_calls=w.tool_calls_per_rollout,
        mean_output_tokens=_column(w.output_tokens.map(lambda d: d.mean)),
        decode_s_per_token=_column(_mean_reciprocal(columns.inference.decode_tps, rates)),
        mean_tool_s=_column(tool_time.map(lambda d: d.mean)),
        mean_tool_output_tokens=_column(tool_output.map(lambda d: d.mean)),
        mean_parallel_calls=_column(calls.map(lambda d: d.mean)),
        parallel=calls.map(lambda d: float(d.support()[0].max() > 1)) > 0,
    )


@lru_cache(maxsize=256)
def tool_mixture(tools: tuple[ToolKind, ...], field: str) -> Mixture:
    """The distribution of ``field`` (``time_s`` or ``output_tokens``) of one call of the mix.

    Kept for the mixes seen last: a sweep or the dashboard asks for the same mix again.
    """
    return Mixture(
        weights=tuple(tool.weight for tool in tools),
        components=tuple(getattr(tool, field) for tool in tools),
    )


def _mean_reciprocal(rates: ObjectColumn[Any], constants: np.ndarray) -> np.ndarray:
    """E[1 / rate] of each point.  When every law is a constant (``constants`` their values)
    they are divided together: the same correctly rounded 1 / value as ``mean_reciprocal``."""
    if np.isnan(constants).any():
        return rates.map(lambda d: d.mean_reciprocal())
    with np.errstate(divide="ignore"):
        return (1.0 / constants)[rates.index]  # 1 / 0 is inf, as a zero constant's


def _column(values: np.ndarray) -> np.ndarray:
    return values[:, None]
