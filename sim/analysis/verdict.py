"""The one-sentence verdict of a comparison, shared by the command line and the dashboard."""

from __future__ import annotations

from models.stages import STAGES
from sim.analysis.metrics import Metric
from sim.analysis.results import Comparison


def verdict(comparison: Comparison, name_a: str | None = None, name_b: str | None = None) -> str:
    """One sentence: how much faster b is than a, the biggest saving, what dominates b
    ("still dominates" when the same stage dominated a).

    The sides are named by their specs unless names are given (e.g. transports).
    """
    a, b = comparison.measured()
    name_a, name_b = name_a or a.spec, name_b or b.spec
    saved = {stage: a.budget_s[stage] - b.budget_s[stage] for stage in STAGES}
    biggest = max(saved, key=saved.__getitem__)
    share_b = b.budget_share
    dominant = max(STAGES, key=share_b.__getitem__)
    before = max(STAGES, key=a.budget_share.__getitem__)
    tense = "still" if dominant is before else "now"
    change = comparison.reduction(Metric.E2E_REDUCTION)
    direction = "faster" if change >= 0 else "slower"
    return (
        f"{name_b} is {abs(change):.1%} {direction} end to end than {name_a}; "
        f"the biggest saving is {biggest.label} ({saved[biggest]:.2f} s per rollout), "
        f"and {dominant.label} {tense} dominates {name_b} "
        f"({share_b[dominant]:.0%} of its time)."
    )
