"""Print the parameter reference of the scenario tree as Markdown tables.

Walks ``models.scenario.Scenario``: every field with its unit (read from the
suffix of its name), its allowed range (from the field's validation
metadata), the value in codex-spark, its description and its source; the
single-agent sections for docs/model/parameters.md, the fleet's for docs/load.md.  Then
the tool mix and the hardware profiles.

    .venv/bin/python -m docs.scripts.parameter_table
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from docs.scripts.markdown import table
from models.distributions import Constant, DistributionBase, Empirical, LogNormal, Mixture, Uniform
from models.hardware import hardware_registry
from models.loading import load_scenario
from models.scenario import Scenario
from models.workload import ToolKind

PRESET = "codex-spark"

# Longest suffix first: the first match names the unit.
_SUFFIX_UNITS = (
    ("_per_1k_tokens_ms", "ms per 1k tokens"),
    ("_per_item_ms", "ms per item"),
    ("_per_kb_ms", "ms per KB (1,024 bytes)"),
    ("_bytes_per_s", "bytes/s"),
    ("_bytes_per_token", "bytes/token"),
    ("bytes_per_token", "bytes/token"),
    ("_per_hour", "1/h"),
    ("_per_minute", "1/min"),
    ("_per_s", "1/s"),
    ("_tps", "tokens/s"),
    ("_ms", "ms"),
    ("_s", "s"),
    ("_tokens", "tokens"),
    ("_bytes", "bytes"),
    ("_rtts", "round trips"),
    ("_prob", "probability"),
    ("_fraction", "fraction"),
)
_NAMED_UNITS = {
    "tool_calls_per_rollout": "tool calls",
    "output_items_per_turn": "items",
    "parallel_calls_per_turn": "calls",
    "max_retries": "retries",
    "intermediate_hops": "calls",
    "weight": "relative weight",
    "seed": "-",
}


def unit(name: str, info: FieldInfo) -> str:
    """The unit of a field, from its name."""
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    for suffix, text in _SUFFIX_UNITS:
        if name.endswith(suffix):
            return text
    if info.annotation is bool:
        return "flag"
    if info.annotation is int:
        return "count"
    return "-"


def number(value: float) -> str:
    """A bound or value, short: 1e+06 style for big round numbers."""
    if value == 2**63 - 1:
        return "2^63 - 1"
    if float(value).is_integer() and value >= 1e5:
        exponent = len(str(int(value))) - 1
        if value == 10**exponent:
            return f"10^{exponent}"
    if float(value).is_integer() and abs(value) < 1e6:
        return f"{int(value):,}"
    return f"{value:g}"


def bounds(info: FieldInfo) -> str:
    """The allowed range from the field's validation metadata."""
    low = high = None
    for item in info.metadata:
        if isinstance(item, at.Ge):
            low = f"[{number(item.ge)}"
        elif isinstance(item, at.Gt):
            low = f"({number(item.gt)}"
        elif isinstance(item, at.Le):
            high = f"{number(item.le)}]"
        elif isinstance(item, at.Lt):
            high = f"{number(item.lt)})"
        elif isinstance(item, at.MinLen):
            return f"at least {item.min_length} " + ("character" if info.annotation is str else "")
    if low or high:
        return f"{low or '(-inf'}, {high or 'inf)'}"
    return ""


def allowed(name: str, info: FieldInfo) -> str:
    """The range column: numeric bounds, or what a non-numeric field accepts."""
    text = bounds(info)
    if name == "tools":
        return "at least 1 tool kind"
    if text:
        return text
    if info.annotation is bool:
        return "true / false"
    if name == "tool_calls_per_rollout":
        return "integer-valued distribution"
    if name == "decode_tps":
        return "distribution with 0 < E[1/rate] <= 10 s per token"
    if name == "hardware":
        return ", ".join(hardware_registry())
    if "Constant" in str(info.annotation):
        return "distribution (values ≥ 0)"
    return "any"


def describe(value: Any) -> str:
    """A preset value, distributions in one line with their mean."""
    if isinstance(value, DistributionBase):
        if isinstance(value, Constant):
            return number(value.value)
        return f"{distribution(value)}; mean {value.mean:,.4g}"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, tuple):
        return "see the tool mix"
    return str(value)


def distribution(d: DistributionBase) -> str:
    if isinstance(d, Constant):
        return number(d.value)
    if isinstance(d, LogNormal):
        return f"lognormal(median {number(d.median)}, sigma {d.sigma:g})"
    if isinstance(d, Uniform):
        return f"uniform({number(d.low)}, {number(d.high)})"
    if isinstance(d, Empirical):
        values = ", ".join(number(v) for v in d.values)
        weights = ", ".join(f"{w:g}" for w in d.weights)
        return f"empirical({values}; weights {weights})"
    if isinstance(d, Mixture):
        parts = ", ".join(
            f"{w:g} x {distribution(c)}" for w, c in zip(d.weights, d.components, strict=True)
        )
        return f"mixture({parts})"
    return f"exponential(mean {number(d.mean)})"


def rows(
    model: type[BaseModel], value: Any, prefix: str, names: Iterable[str] | None = None
) -> list[list[str]]:
    """One row per leaf field of ``model`` (recursing into sections), or of ``names`` only."""
    out = []
    for name in model.__pydantic_fields__ if names is None else names:
        info = model.__pydantic_fields__[name]
        path = f"{prefix}{name}"
        child = getattr(value, name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            out.extend(rows(info.annotation, child, f"{path}."))
            continue
        source = (info.json_schema_extra or {}).get("source", "")
        out.append(
            [
                f"`{path}`",
                unit(name, info),
                allowed(name, info),
                describe(child),
                info.description or "",
                source,
            ]
        )
        if name == "tools":
            for tool_name, tool_info in ToolKind.model_fields.items():
                tool_source = (tool_info.json_schema_extra or {}).get("source", "")
                out.append(
                    [
                        f"`{path}[].{tool_name}`",
                        unit(tool_name, tool_info),
                        allowed(tool_name, tool_info),
                        "see the tool mix",
                        tool_info.description or "",
                        tool_source,
                    ]
                )
    return out


SINGLE_AGENT = (
    "name",
    "description",
    "seed",
    "workload",
    "client",
    "network",
    "api",
    "safety",
    "inference",
    "connection",
    "retries",
    "compaction",
)
"""The fields the single-agent engines (DES and analytic) read; others form a second table."""


HEADER = ["field", "unit", "allowed range", f"`{PRESET}`", "description", "source"]


def single_agent() -> str:
    """The fields the single-agent engines read, with codex-spark's values."""
    return table(HEADER, rows(Scenario, load_scenario(PRESET), "", SINGLE_AGENT))


def fleet() -> str:
    """The fleet's load and capacity sections."""
    others = [name for name in Scenario.model_fields if name not in SINGLE_AGENT]
    return table(HEADER, rows(Scenario, load_scenario(PRESET), "", others))


def tool_mix() -> str:
    tools = load_scenario(PRESET).workload.tools
    weights = sum(tool.weight for tool in tools)
    body = [
        [
            f"`{tool.name}`",
            f"{tool.weight:g} ({tool.weight / weights:.1%} of calls)",
            describe(tool.time_s),
            describe(tool.output_tokens),
        ]
        for tool in tools
    ]
    return table(["tool", "weight", "time_s (s)", "output_tokens (tokens)"], body)


def hardware() -> str:
    body = [
        [
            f"`{name}`",
            number(entry.prefill_tps),
            describe(entry.decode_tps),
            f"{1 / entry.decode_tps.mean_reciprocal():,.0f}",
            number(entry.overhead_ms),
            entry.source,
        ]
        for name, entry in hardware_registry().items()
    ]
    header = [
        "profile",
        "prefill_tps (tokens/s)",
        "decode_tps (tokens/s)",
        "1 / E[1/decode_tps] (tokens/s)",
        "overhead_ms (ms)",
        "source",
    ]
    return table(header, body)


BLOCKS = {"single-agent": single_agent, "fleet": fleet, "tools": tool_mix, "hardware": hardware}


def main() -> None:
    for block in BLOCKS.values():
        print(block())
        print()


if __name__ == "__main__":
    main()
