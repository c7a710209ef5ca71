"""Set a fitted scenario's stage costs so that it reproduces the trace's TTFT and e2e.

Each step scales a group of costs, keeping the preset's proportions within it, by
the factor that makes one of the scenario's means on the recorded transport equal
the measured one; the costs are replaced, not added to (a factor may be below 1).
The means come from the analytic engine; ``scipy.optimize.brentq`` finds each
factor.

Without the service's own timing (the usual trace) the costs a trace cannot
separate go in two groups: those before the first token (the API's stages, the
safety classifiers, the network round trip, the inference overhead) are scaled to
the measured mean TTFT, then the post-inference work to the mean e2e.  A trace
without first output times has one factor for both, set by the e2e.

With the service's timing split (``server_split``) the API comes first and on its
own: the API's and the safety classifiers' costs are scaled so that the model's
API time per request equals the service's mean API overhead (the WebSocket timing
event), or, from ``openai-processing-ms`` of whole JSON responses, so that the
model's server time per request (API, safety and inference) equals the service's.
Then the network's round trip and connection costs take what is left of the TTFT
(or, without first outputs, of the e2e), and the download rate (which holds the
client reading each response) what is left of the e2e.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scipy import optimize

from models.errors import ScenarioError
from models.loading import validate
from models.stages import STAGES, Group
from sim.analysis.results import UnmeasuredPoint
from sim.analysis.run import Engine, Spec, execute
from sim.analysis.summary import summarize
from sim.traces.measures import Measured
from sim.traces.server_split import MIN_REQUESTS
from sim.turn.transports import Transport

Field = tuple[str, str]
API_FIELDS: tuple[Field, ...] = (
    ("api", "validate_fixed_ms"),
    ("api", "validate_per_item_ms"),
    ("api", "state_store_fixed_ms"),
    ("api", "state_store_per_kb_ms"),
    ("api", "memory_state_ms"),
    ("api", "render_per_1k_tokens_ms"),
    ("api", "route_ms"),
    ("api", "route_cached_ms"),
    ("api", "hop_ms"),
    ("safety", "blocking_fixed_ms"),
    ("safety", "blocking_per_1k_tokens_ms"),
    ("safety", "parallel_fixed_ms"),
    ("safety", "parallel_per_1k_tokens_ms"),
)
NETWORK_FIELDS: tuple[Field, ...] = (("network", "rtt_ms"), ("network", "tls_crypto_ms"))
INFERENCE_FIXED: tuple[Field, ...] = (("inference", "overhead_ms"),)
BEFORE_FIRST_TOKEN = API_FIELDS + NETWORK_FIELDS + INFERENCE_FIXED
AFTER_FIRST_TOKEN: tuple[Field, ...] = (("api", "post_fixed_ms"), ("api", "post_per_1k_tokens_ms"))
DOWNLOAD_FIELDS: tuple[Field, ...] = (("network", "downlink_bytes_per_s"),)
"""A rate: scaled by the inverse of its step's factor (a larger factor, a slower download)."""
MAX_SCALE = 50.0
"""The largest factor tried (costs 50 times the preset's)."""
RATE_SCALES = (1e-3, 1e4)
"""The factors tried on the download rate: it also holds the client's reading of each
response (parsing its events), which on a fast network is most of it, so it may be far
below the preset's link rate."""
_SERVER_GROUPS = {Group.API, Group.SAFETY}
_SERVER_WITH_ENGINE = _SERVER_GROUPS | {Group.INFERENCE}


@dataclass(frozen=True)
class Step:
    """One factor: the costs it scaled and the measured mean it reproduces."""

    fields: tuple[Field, ...]
    factor: float
    matched: str
    """What it reproduces, e.g. ``mean TTFT 35.1 ms``."""


@dataclass(frozen=True)
class Calibration:
    """The steps, the measured targets and what the calibrated scenario gives."""

    steps: tuple[Step, ...]
    target_ttft_s: float | None
    target_e2e_s: float
    model_ttft_s: float
    model_e2e_s: float
    notes: tuple[str, ...]

    def sources(self, label: str) -> dict[str, str]:
        """Each scaled field's source line."""
        out = {}
        for step in self.steps:
            how = "preset value / " if step.fields == DOWNLOAD_FIELDS else "preset value x "
            line = f"{label}: {how}{step.factor:.3f}, set so the {step.matched} is reproduced"
            out.update({f"{s}.{k}": line for s, k in step.fields})
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": [
                {
                    "fields": [f"{s}.{k}" for s, k in st.fields],
                    "factor": st.factor,
                    "matched": st.matched,
                }
                for st in self.steps
            ],
            "target_ttft_s": self.target_ttft_s,
            "target_e2e_s": self.target_e2e_s,
            "model_ttft_s": self.model_ttft_s,
            "model_e2e_s": self.model_e2e_s,
        }


@dataclass(frozen=True)
class _Means:
    ttft_s: float
    e2e_s: float
    server_s: float
    """Per request: the API's and the safety classifiers' stages."""
    server_with_engine_s: float
    """Per request: those and the inference stages (the service's whole time)."""


def calibrate(
    data: dict[str, Any], transport: str, m: Measured, engine_fitted: bool
) -> Calibration:
    """Scale ``data``'s costs in place; the steps and what they reproduce.  ``engine_fitted``:
    the inference overhead came from the service's engine times and is not scaled."""
    resolved = validate(data).model_dump(mode="json")
    everything = BEFORE_FIRST_TOKEN + AFTER_FIRST_TOKEN + DOWNLOAD_FIELDS
    base = {field: float(resolved[field[0]][field[1]]) for field in everything}
    factors: dict[tuple[Field, ...], float] = {}

    def apply(target: dict[str, Any]) -> None:
        for fields, factor in factors.items():
            for field in fields:
                value = base[field] / factor if fields == DOWNLOAD_FIELDS else base[field] * factor
                target[field[0]][field[1]] = value

    def means(fields: tuple[Field, ...], factor: float) -> _Means:
        trial = copy.deepcopy(data)
        factors[fields] = factor
        apply(trial)
        spec = Spec(f"{data['name']}:{transport}", str(data["name"]), Transport(transport))
        result = summarize(execute(spec, validate(trial), Engine.ANALYTIC, 1))
        if isinstance(result, UnmeasuredPoint):
            raise ValueError(f"{spec.text}: the analytic engine gave no means")
        turns = result.turns_per_rollout

        def per_request(groups: set[Group]) -> float:
            return sum(result.budget_s[s] for s in STAGES if s.group in groups) / turns

        return _Means(
            result.ttft_s.mean,
            result.e2e_s.mean,
            per_request(_SERVER_GROUPS),
            per_request(_SERVER_WITH_ENGINE),
        )

    notes: list[str] = []
    steps: list[Step] = []

    def step(
        fields: tuple[Field, ...], pick: Callable[[_Means], float], target: float, what: str
    ) -> None:
        ends = RATE_SCALES if fields == DOWNLOAD_FIELDS else (0.0, MAX_SCALE)
        factor = _solve(lambda f: pick(means(fields, f)) - target, ends, what, notes)
        factors[fields] = factor
        steps.append(Step(fields, factor, what))

    target_e2e = float(m.e2e_s.mean())
    target_ttft = float(m.ttft_s.mean()) if m.ttft_s.size else None
    e2e_text = f"mean e2e {target_e2e:.3f} s"
    ttft_text = f"mean TTFT {target_ttft * 1e3:.1f} ms" if target_ttft is not None else ""
    network = NETWORK_FIELDS if engine_fitted else NETWORK_FIELDS + INFERENCE_FIXED
    if _server_step(m, step):
        if target_ttft is not None:
            step(network, lambda x: x.ttft_s, target_ttft, ttft_text)
            step(DOWNLOAD_FIELDS, lambda x: x.e2e_s, target_e2e, e2e_text)
        else:
            step(network, lambda x: x.e2e_s, target_e2e, f"{e2e_text} (no TTFT in the trace)")
    else:
        before = API_FIELDS + network
        if target_ttft is not None:
            step(before, lambda x: x.ttft_s, target_ttft, ttft_text)
            step(AFTER_FIRST_TOKEN, lambda x: x.e2e_s, target_e2e, e2e_text)
        else:
            step(
                before + AFTER_FIRST_TOKEN,
                lambda x: x.e2e_s,
                target_e2e,
                f"{e2e_text} (no TTFT in the trace)",
            )
    apply(data)
    final = means(steps[-1].fields, steps[-1].factor)
    return Calibration(
        tuple(steps), target_ttft, target_e2e, final.ttft_s, final.e2e_s, tuple(notes)
    )


def _server_step(m: Measured, step: Callable[..., None]) -> bool:
    """Scale the API's costs to what the service said it spent (False: it said nothing)."""
    api_fields = API_FIELDS + AFTER_FIRST_TOKEN
    if m.server_api_overhead_s.size >= MIN_REQUESTS:
        target = float(m.server_api_overhead_s.mean())
        what = (
            f"mean API overhead a request {target * 1e3:.2f} ms (the WebSocket timing's "
            f"responses_duration_excl_engine_and_client_tool_time_ms, n = "
            f"{m.server_api_overhead_s.size})"
        )
        step(api_fields, lambda x: x.server_s, target, what)
        return True
    if m.server_processing_s.size >= MIN_REQUESTS:
        target = float(m.server_processing_s.mean())
        what = (
            f"mean server time a request {target * 1e3:.2f} ms (openai-processing-ms of whole "
            f"responses, n = {m.server_processing_s.size}; API, safety and inference)"
        )
        step(api_fields, lambda x: x.server_with_engine_s, target, what)
        return True
    return False


def _solve(
    gap: Callable[[float], float], ends: tuple[float, float], what: str, notes: list[str]
) -> float:
    """The factor between ``ends`` where ``gap`` is 0, or the nearer end (noted)."""
    low_end, high_end = ends
    low, high = gap(low_end), gap(high_end)
    if low == high:
        notes.append(f"the {what} does not depend on these costs on this transport (kept x 1)")
        return 1.0
    if low >= 0:
        notes.append(f"the {what} is below what the assumed fixed costs allow (x {low_end:g})")
        return low_end
    if high <= 0:
        notes.append(f"the {what} is above {high_end:g} x the preset's costs")
        return high_end
    try:
        return float(optimize.brentq(gap, low_end, high_end, xtol=1e-6, rtol=1e-9))
    except ValueError as error:
        raise ScenarioError(f"fit: the {what} calibration failed ({error})") from None
