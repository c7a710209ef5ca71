"""Axis labels with units, from the unit suffixes of scenario paths and metric names."""

from __future__ import annotations

import re

from models.stages import Stage
from sim.analysis.metrics import Metric

_UNITS = (
    ("_bytes_per_s", "bytes/s"),
    ("_per_1k_tokens_ms", "ms per 1k tokens"),
    ("_per_item_ms", "ms per item"),
    ("_per_kb_ms", "ms per KB"),
    ("_per_hour", "per hour"),
    ("_per_rollout", "per rollout"),
    ("_per_token", "per token"),
    ("_ms", "ms"),
    ("_s", "s"),
    ("_tps", "tokens/s"),
    ("_tokens", "tokens"),
    ("_bytes", "bytes"),
    ("_rtts", "round trips"),
    ("_prob", "probability"),
    ("_fraction", "fraction"),
)
_STATISTICS = {"mean": "mean", "p50": "median", "p95": "p95", "p99": "p99"}


def unit(name: str) -> str | None:
    """The unit a field or column name ends with, if any.

    Inside a distribution (``workload.tools[3].time_s.median``) the unit is the
    distribution field's.
    """
    for part in reversed(re.sub(r"\[\d+\]", "", name).split(".")):
        found = next((text for suffix, text in _UNITS if part.endswith(suffix)), None)
        if found:
            return found
    return None


def parameter_label(path: str) -> str:
    """``inference.decode_tps (tokens/s)``."""
    found = unit(path)
    return f"{path} ({found})" if found else path


def is_reduction(column: str) -> bool:
    """Reductions are fractions shown as percentages."""
    return _metric(column) in (
        Metric.E2E_REDUCTION,
        Metric.TTFT_REDUCTION,
        Metric.API_CPU_REDUCTION,
    )


def metric_label(column: str, transport: str | None = None, baseline: str | None = None) -> str:
    """A result column in words, with its unit; reductions name the transports."""
    metric = _metric(column)
    if metric is None:
        return column
    rest = column.removeprefix(metric.value).removeprefix("_")
    if metric is Metric.BUDGET_S and rest in set(Stage):
        return f"{Stage(rest).label}, seconds per rollout"
    if metric is Metric.BUDGET_SHARE and rest in set(Stage):
        return f"{Stage(rest).label}, share of end-to-end time"
    if is_reduction(column):
        over = f" of {transport} over {baseline}" if transport and baseline else ""
        return f"{metric.label}{over} (%)"
    statistic = _STATISTICS.get(rest)
    return f"{metric.label}, {statistic}" if statistic else metric.label


def _metric(column: str) -> Metric | None:
    matches = [m for m in Metric if column == m.value or column.startswith(f"{m.value}_")]
    return max(matches, key=lambda m: len(m.value), default=None)


def default_metric(columns: list[str]) -> str:
    """The end-to-end reduction when the sweep compared transports, else the mean e2e time."""
    return "e2e_reduction" if "e2e_reduction" in columns else "e2e_s_mean"
