"""What-if rewrites of a scenario: a distribution rescaled to a new mean, a fixed tool-call
count, another hardware profile.  Rescaling keeps the shape the preset gave (bursts, the
tool mix)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from models.distributions import Constant, Distribution, LogNormal, Mixture
from models.errors import ScenarioError
from models.hardware import HardwareProfile
from models.scenario import Scenario

Table = dict[str, Any]


def mean_tool_time_s(scenario: Scenario) -> float:
    """Mean client time of one tool call over the tool mix (s)."""
    return scenario.workload.mean_tool_time_s()


def decode_tps(scenario: Scenario) -> float:
    """The decode speed that sets decode time: 1 / E[1/rate] (tokens/s)."""
    return 1.0 / scenario.inference.decode_tps.mean_reciprocal()


def stated_decode_tps(scenario: Scenario) -> float:
    """The decode speed the profile states (tokens/s): the median of its main part (a
    mixture's heaviest component), e.g. cerebras-class's 1,000 sustained, whose bursts make
    it decode as fast on average as a constant 1,103 would."""
    return _stated_tps(scenario.inference.decode_tps)


def _stated_tps(rate: Distribution) -> float:
    if isinstance(rate, Mixture):
        heaviest = max(range(len(rate.weights)), key=lambda i: rate.weights[i])
        return _stated_tps(rate.components[heaviest])
    if isinstance(rate, LogNormal):
        return rate.median
    if isinstance(rate, Constant):
        return rate.value
    return 1.0 / rate.mean_reciprocal()


def mean_tool_calls(scenario: Scenario) -> int:
    """Mean tool calls per rollout, rounded (the final answer is one more request)."""
    return round(scenario.workload.tool_calls_per_rollout.mean)


def scaled_distribution(table: Table, factor: float) -> Table:
    """A distribution table with every value multiplied by ``factor`` (shape kept)."""
    kind = table["kind"]
    if kind == "mixture":
        return {
            **table,
            "components": [scaled_distribution(c, factor) for c in table["components"]],
        }
    if kind not in _SCALE_KEYS:
        raise ScenarioError(f"distribution kind = {kind!r}: cannot be rescaled")
    return {**table, **{key: _times(table[key], factor) for key in _SCALE_KEYS[kind]}}


def with_decode_tps(scenario: Scenario, tps: float) -> Scenario:
    """``scenario`` with its decode-rate distribution rescaled to ``tps`` (no revalidation)."""
    table = scenario.inference.decode_tps.model_dump(mode="json", by_alias=True)
    scaled = _DISTRIBUTION.validate_python(scaled_distribution(table, tps / decode_tps(scenario)))
    inference = scenario.inference.model_copy(update={"decode_tps": scaled})
    return scenario.model_copy(update={"inference": inference})


def with_tool_calls(scenario: Scenario, calls: int) -> Scenario:
    """``scenario`` with a constant number of tool calls per rollout (no revalidation)."""
    workload = scenario.workload.model_copy(
        update={"tool_calls_per_rollout": Constant(value=calls)}
    )
    return scenario.model_copy(update={"workload": workload})


def with_hardware(data: Table, name: str) -> None:
    """Switch the inference section to a hardware profile: its rates replace the current ones."""
    inference = {k: v for k, v in data["inference"].items() if k not in _PROFILE_FIELDS}
    data["inference"] = {**inference, "hardware": name}


_SCALE_KEYS = {
    "constant": ("value",),
    "exponential": ("mean",),
    "lognormal": ("median",),
    "uniform": ("low", "high"),
    "empirical": ("values",),
}
_PROFILE_FIELDS = frozenset(HardwareProfile.model_fields)
_DISTRIBUTION: TypeAdapter[Any] = TypeAdapter(Distribution)


def _times(value: float | list[float], factor: float) -> float | list[float]:
    if isinstance(value, list):
        return [v * factor for v in value]
    return value * factor
