"""The dashboard's main knobs: what each reads from a scenario and writes into its table.

A knob shows the scenario's own value until it is moved; only a moved knob
writes.  Knobs that stand for a whole distribution (decode speed, tool time)
rescale it, so the shape the preset gave it (bursts, the tool mix) is kept.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from models.assignments import set_path
from models.hardware import hardware_registry
from models.published import DECODE_MARKS
from models.scenario import Scenario
from sim.dashboard.fields import field_spec, validated
from sim.dashboard.rescale import (
    mean_tool_calls,
    mean_tool_time_s,
    scaled_distribution,
    stated_decode_tps,
    with_hardware,
)

Table = dict[str, Any]

DECODE_MARKS_TPS = tuple(DECODE_MARKS)
"""Published decode speeds: GPT-5-class flagships, Codex-Spark sustained, its bursts."""

_NICE_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


class Control(StrEnum):
    """The widget a knob is drawn with."""

    SLIDER = "slider"
    LOG_SLIDER = "log_slider"
    TOGGLE = "toggle"
    CHOICE = "choice"


@dataclass(frozen=True)
class Knob:
    """One main control of the scenario panel."""

    key: str
    label: str
    group: str
    control: Control
    help: str
    read: Callable[[Scenario], Any]
    write: Callable[[Table, Scenario, Any], None]
    """Write the shown value into the table; the scenario is the table's validated form."""
    covers: tuple[str, ...]
    """Scenario paths this knob owns (left out of the generated "advanced" fields)."""
    low: float = 0.0
    high: float = 1.0
    step: float = 1.0
    integer: bool = False
    value_format: str = "{:g}"
    marks: tuple[float, ...] = ()
    choices: tuple[str, ...] = ()

    def options(self, *values: float) -> list[float]:
        """Log-slider positions: round numbers, the marks and ``values`` (e.g. the default)."""
        return log_options(self.low, self.high, (*self.marks, *values))

    def bounds(self, *values: float) -> tuple[float, float]:
        """Slider range, widened to include ``values`` (a scenario may lie outside the usual)."""
        return min(self.low, *values), max(self.high, *values)

    @property
    def slider_format(self) -> str:
        """printf-style format of a linear slider's value."""
        if self.integer:
            return "%d"
        return "%.0f" if self.step >= 1 else "%.2f"

    def show(self, value: Any) -> str:
        return self.value_format.format(value)


def apply(data: Table, scenario: Scenario, knob: Knob, value: Any) -> tuple[Table, Scenario]:
    """``data`` (whose validated form is ``scenario``) with ``knob`` set to ``value``: the new
    full table and its scenario.

    Raises a one-line ScenarioError when the result is not a valid scenario.
    """
    changed = copy.deepcopy(data)
    knob.write(changed, scenario, value)
    return validated(changed)


def log_options(low: float, high: float, extra: tuple[float, ...] = ()) -> list[float]:
    """Round numbers (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 per decade) from low to high."""
    grid = {low, high, *extra}
    for decade in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        grid.update(float(f"{m * 10.0**decade:.12g}") for m in _NICE_MANTISSAS)
    return sorted(v for v in grid if low <= v <= high or v in extra)


def _write_decode(data: Table, scenario: Scenario, tps: float) -> None:
    factor = tps / stated_decode_tps(scenario)
    data["inference"]["decode_tps"] = scaled_distribution(data["inference"]["decode_tps"], factor)


def _write_tool_time(data: Table, scenario: Scenario, mean_s: float) -> None:
    factor = mean_s / mean_tool_time_s(scenario)
    for tool in data["workload"]["tools"]:
        tool["time_s"] = scaled_distribution(tool["time_s"], factor)


def _write_tool_calls(data: Table, scenario: Scenario, calls: int) -> None:
    data["workload"]["tool_calls_per_rollout"] = int(calls)


def _path_knob(
    path: str, label: str, group: str, low: float, high: float, step: float, **extra: Any
) -> Knob:
    """A knob bound to one scenario field, shown in that field's unit times ``unit_factor``."""
    factor = extra.pop("unit_factor", 1.0)
    control = extra.pop("control", Control.SLIDER)

    def read(scenario: Scenario) -> Any:
        value = scenario
        for part in path.split("."):
            value = getattr(value, part)
        return value if isinstance(value, bool) else value * factor

    def write(data: Table, _scenario: Scenario, value: Any) -> None:
        if not isinstance(value, bool):
            value = round(value / factor) if extra.get("integer") else value / factor
        set_path(data, path, value)

    return Knob(
        key=path,
        label=label,
        group=group,
        control=control,
        help=field_spec(path).help,
        read=read,
        write=write,
        covers=(path,),
        low=low,
        high=high,
        step=step,
        **extra,
    )


HARDWARE = Knob(
    key="inference.hardware",
    label="hardware profile",
    group="Inference",
    control=Control.CHOICE,
    help=field_spec("inference.hardware").help
    + " Switching replaces prefill rate, decode speed and overhead with the profile's.",
    read=lambda scenario: scenario.inference.hardware,
    write=lambda data, _scenario, name: with_hardware(data, name),
    covers=("inference.hardware",),
    choices=tuple(hardware_registry()),
)

DECODE = Knob(
    key="inference.decode_tps",
    label="decode speed (tokens/s)",
    group="Inference",
    control=Control.LOG_SLIDER,
    help="The speed the hardware profile states (with bursts: its sustained rate); moving it "
    "rescales the whole decode-rate distribution, bursts kept. Published: about 65 tokens/s "
    "for GPT-5-class flagships, over 1,000 for Codex-Spark with bursts to 4,000. The Amdahl "
    "view's axis is the constant speed that decodes as fast on average (1 / E[1/rate]).",
    read=stated_decode_tps,
    write=_write_decode,
    covers=("inference.decode_tps",),
    low=30.0,
    high=5000.0,
    value_format="{:,.0f}",
    marks=DECODE_MARKS_TPS,
)

TOOL_CALLS = Knob(
    key="workload.tool_calls_per_rollout",
    label="tool calls per rollout",
    group="Workload",
    control=Control.SLIDER,
    help="Moving it replaces the distribution of tool calls by this constant. "
    + field_spec("workload.tool_calls_per_rollout").help,
    read=mean_tool_calls,
    write=_write_tool_calls,
    covers=("workload.tool_calls_per_rollout",),
    low=1,
    high=100,
    step=1,
    integer=True,
)

TOOL_TIME = Knob(
    key="workload.tools.time_s",
    label="mean tool time per call (s)",
    group="Workload",
    control=Control.LOG_SLIDER,
    help="Rescales every tool's time distribution (the mix is kept) to this mean.",
    read=mean_tool_time_s,
    write=_write_tool_time,
    covers=(),
    low=0.01,
    high=30.0,
    value_format="{:.3g}",
)

KNOBS: tuple[Knob, ...] = (
    DECODE,
    TOOL_CALLS,
    TOOL_TIME,
    _path_knob("network.rtt_ms", "round-trip time (ms)", "Network", 0.0, 300.0, 1.0),
    _path_knob("api.validate_per_item_ms", "validate, per item (ms)", "API", 0.0, 5.0, 0.05),
    _path_knob("api.state_store_fixed_ms", "load state from storage (ms)", "API", 0.0, 200.0, 1.0),
    _path_knob("api.render_per_1k_tokens_ms", "render, per 1k tokens (ms)", "API", 0.0, 30.0, 0.5),
    _path_knob("api.post_fixed_ms", "post-inference work (ms)", "API", 0.0, 200.0, 1.0),
    _path_knob("api.intermediate_hops", "intermediate hops", "API", 0, 5, 1, integer=True),
    _path_knob(
        "safety.blocking_per_1k_tokens_ms",
        "blocking safety, per 1k tokens (ms)",
        "Safety",
        0.0,
        30.0,
        0.5,
    ),
    _path_knob(
        "api.render_cache_hit_prob",
        "render cache hit probability (HTTP)",
        "Caches",
        0.0,
        1.0,
        0.05,
    ),
    _path_knob(
        "api.config_cache", "model configuration cache", "Caches", 0, 1, 1, control=Control.TOGGLE
    ),
    _path_knob(
        "connection.ws_lifetime_s",
        "WebSocket lifetime (min)",
        "Connection",
        0.1,
        240.0,
        0.0,
        unit_factor=1 / 60,
        control=Control.LOG_SLIDER,
        value_format="{:.3g}",
    ),
    _path_knob(
        "connection.ws_drops_per_hour",
        "connection drops per hour",
        "Connection",
        0.0,
        60.0,
        0.5,
    ),
    _path_knob(
        "connection.store",
        "store=true (reload lost state from storage)",
        "Connection",
        0,
        1,
        1,
        control=Control.TOGGLE,
    ),
)
"""The main knobs in panel order (the hardware choice comes before them)."""

COVERED_PATHS = frozenset(path for knob in (HARDWARE, *KNOBS) for path in knob.covers)
"""Paths with a main knob: the generated "advanced" fields leave them out."""
