"""The one-sentence verdict of a comparison, shared by the command line and the dashboard."""

from __future__ import annotations

from models.stages import STAGES
from sim.analysis.metrics import Metric
from sim.analysis.results import Comparison

DOMINANT_SHARE = 0.5
"""A stage "dominates" a rollout only above this share of its time; below it, it is "the
largest share"."""


def verdict(comparison: Comparison, name_a: str | None = None, name_b: str | None = None) -> str:
    """One sentence: how much faster b is than a, the biggest saving, the largest share of
    b (it "dominates" above half; "still" when the same stage was a's largest, "now" when
    not).  Stages appear as words (``Stage.phrase``), not as legend labels.

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
    share = share_b[dominant]
    role = (
        f"{tense} dominates {name_b}"
        if share > DOMINANT_SHARE
        else f"is {tense} the largest share of {name_b}"
    )
    return (
        f"{name_b} is {abs(change):.1%} {direction} end to end than {name_a}; "
        f"the biggest saving is in {biggest.phrase} ({saved[biggest]:.2f} s per rollout), "
        f"and {dominant.phrase} {role} ({share:.0%} of its time)."
    )
