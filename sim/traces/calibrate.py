"""Set a fitted scenario's stage costs so that it reproduces the trace's TTFT and e2e.

The costs a trace cannot separate (the API's stages before the first token, the
safety classifiers, the network round trip, the inference overhead; and, after
the first token, the post-inference work) keep the preset's proportions and are
scaled: the costs before the first token by the factor that makes the mean
TTFT on the recorded transport equal the measured one, then the post-inference
costs by the factor that makes the mean e2e equal the measured one.  A trace
without first output times has one factor for both, set by the e2e.  The costs
are replaced, not added to: the factors may be below 1.  The means come from
the analytic engine; ``scipy.optimize.brentq`` finds each factor.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scipy import optimize

from models.errors import ScenarioError
from models.loading import validate
from sim.analysis.results import UnmeasuredPoint
from sim.analysis.run import Engine, Spec, execute
from sim.analysis.summary import summarize
from sim.traces.measures import Measured
from sim.turn.transports import Transport

BEFORE_FIRST_TOKEN = (
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
    ("network", "rtt_ms"),
    ("network", "tls_crypto_ms"),
    ("inference", "overhead_ms"),
)
AFTER_FIRST_TOKEN = (("api", "post_fixed_ms"), ("api", "post_per_1k_tokens_ms"))
MAX_SCALE = 50.0
"""The largest factor tried (costs 50 times the preset's)."""


@dataclass(frozen=True)
class Calibration:
    """The two factors, the measured targets and what the calibrated scenario gives."""

    before_scale: float
    after_scale: float
    target_ttft_s: float | None
    target_e2e_s: float
    model_ttft_s: float
    model_e2e_s: float
    notes: tuple[str, ...]

    def sources(self, label: str) -> dict[str, str]:
        """Each scaled field's source line."""
        ttft = (
            f"mean TTFT {self.target_ttft_s * 1e3:.1f} ms"
            if self.target_ttft_s is not None
            else f"mean e2e {self.target_e2e_s:.3f} s (no TTFT in the trace)"
        )
        before = f"{label}: preset value x {self.before_scale:.3f}, set so the {ttft} is reproduced"
        after = (
            f"{label}: preset value x {self.after_scale:.3f}, set so the mean e2e "
            f"{self.target_e2e_s:.3f} s is reproduced"
        )
        out = {f"{s}.{k}": before for s, k in BEFORE_FIRST_TOKEN}
        out.update({f"{s}.{k}": after for s, k in AFTER_FIRST_TOKEN})
        return out


def calibrate(data: dict[str, Any], transport: str, m: Measured) -> Calibration:
    """Scale ``data``'s costs in place; the factors and what they reproduce."""
    resolved = validate(data).model_dump(mode="json")
    base = {key: float(resolved[s][key]) for s, key in BEFORE_FIRST_TOKEN + AFTER_FIRST_TOKEN}

    def apply(target: dict[str, Any], before: float, after: float) -> None:
        for section, key in BEFORE_FIRST_TOKEN:
            target[section][key] = base[key] * before
        for section, key in AFTER_FIRST_TOKEN:
            target[section][key] = base[key] * after

    def means(before: float, after: float) -> tuple[float, float]:
        trial = copy.deepcopy(data)
        apply(trial, before, after)
        spec = Spec(f"{data['name']}:{transport}", str(data["name"]), Transport(transport))
        result = summarize(execute(spec, validate(trial), Engine.ANALYTIC, 1))
        if isinstance(result, UnmeasuredPoint):
            raise ValueError(f"{spec.text}: the analytic engine gave no means")
        return result.ttft_s.mean, result.e2e_s.mean

    notes: list[str] = []
    target_e2e = float(m.e2e_s.mean())
    target_ttft = float(m.ttft_s.mean()) if m.ttft_s.size else None
    if target_ttft is not None:
        before = _solve(lambda s: means(s, 1.0)[0] - target_ttft, "TTFT", notes)
        after = _solve(lambda s: means(before, s)[1] - target_e2e, "e2e", notes)
    else:
        before = _solve(lambda s: means(s, s)[1] - target_e2e, "e2e", notes)
        after = before
    apply(data, before, after)
    ttft, e2e = means(before, after)
    return Calibration(before, after, target_ttft, target_e2e, ttft, e2e, tuple(notes))


def _solve(gap: Callable[[float], float], what: str, notes: list[str]) -> float:
    """The factor in [0, MAX_SCALE] where ``gap`` is 0, or the nearer end (noted)."""
    low, high = gap(0.0), gap(MAX_SCALE)
    if low == high:
        notes.append(f"the {what} does not depend on these costs on this transport (kept x 1)")
        return 1.0
    if low >= 0:
        notes.append(f"the measured {what} is below what the assumed fixed costs allow (x 0)")
        return 0.0
    if high <= 0:
        notes.append(f"the measured {what} is above {MAX_SCALE:g} x the preset's costs")
        return MAX_SCALE
    try:
        return float(optimize.brentq(gap, 0.0, MAX_SCALE, xtol=1e-6, rtol=1e-9))
    except ValueError as error:
        raise ScenarioError(f"fit: the {what} calibration failed ({error})") from None
