"""The probe turns' quantities, split by whether they vary over a block's points.

Each probe turn has, per variant (cold, warm), every stage, TTFT, API and
safety work, cached and uncached prompt tokens (``QUANTITIES``).  In a sweep
most of them are the same at every point (only the decode stage and what
follows from it vary with the decode rate): those are kept as one point's
rows (``sim.analytic.agent.varying``), the others point by point.  What reads
them is elementwise over the quantities, so each quantity's column gives the
same bits whether it is computed once and broadcast or point by point; the
whole array over every point is laid out only when the turns are asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.costs import TurnCosts
from models.stages import STAGES
from models.work import Work
from sim.analytic.agent.layout import TurnCount, later_weights, rollout_sum
from sim.analytic.agent.turn_table import QUANTITIES


@dataclass(frozen=True)
class ProbeQuantities:
    """Both variants' quantities at the probe turns, those every point holds alike once."""

    points: int
    alike_columns: np.ndarray
    """The quantities every point holds alike."""
    alike: np.ndarray
    """Shape (2, 1, probes, alike columns)."""
    varying_columns: np.ndarray
    """The others."""
    varying: np.ndarray
    """Shape (2, points, probes, varying columns), stored probe by probe (what the sums
    read is one probe's quantities over all points)."""

    @classmethod
    def of(
        cls,
        variants: Sequence[tuple[TurnCosts, Work]],
        cached: np.ndarray,
        points: int,
        probes: int,
    ) -> ProbeQuantities:
        """The quantities of each variant's costs and work at ``probes`` probe turns;
        ``cached`` prompt tokens are the same for both."""
        by_variant = [_columns(costs, work, cached) for costs, work in variants]
        varies = np.array([any(_varies(v[q]) for v in by_variant) for q in range(QUANTITIES)])
        alike_columns, varying_columns = np.flatnonzero(~varies), np.flatnonzero(varies)
        alike = np.empty((len(variants), 1, probes, alike_columns.size))
        by_probe = np.empty((len(variants), probes, points, varying_columns.size))
        varying = by_probe.transpose(0, 2, 1, 3)
        for variant, values in enumerate(by_variant):
            for place, q in enumerate(alike_columns.tolist()):
                alike[variant, 0, :, place] = np.broadcast_to(values[q], (1, probes))[0]
            for place, q in enumerate(varying_columns.tolist()):
                varying[variant, ..., place] = values[q]
        return cls(points, alike_columns, alike, varying_columns, varying)

    def rollout_sum(self, count: TurnCount, cold: np.ndarray) -> np.ndarray:
        """``layout.rollout_sum`` of the quantities, shape (points, QUANTITIES)."""
        weights = later_weights(count, cold)
        out = np.empty((self.points, QUANTITIES))
        if self.alike_columns.size:
            out[:, self.alike_columns] = rollout_sum(self.alike, count, cold, weights)
        if self.varying_columns.size:
            out[:, self.varying_columns] = rollout_sum(self.varying, count, cold, weights)
        return out

    def at(self, probes: list[int], q: int) -> np.ndarray:
        """Quantity ``q`` of both variants at ``probes``, shape (2, probes, points), or
        (2, probes, 1) when every point holds it alike."""
        place = int(np.searchsorted(self.varying_columns, q))
        if place < self.varying_columns.size and self.varying_columns[place] == q:
            return self.varying[:, :, probes, place].transpose(0, 2, 1)
        place = int(np.searchsorted(self.alike_columns, q))
        return self.alike[:, :, probes, place].transpose(0, 2, 1)

    def whole(self) -> np.ndarray:
        """Every quantity of every point, shape (2, points, probes, QUANTITIES)."""
        variants, _, probes, _ = self.alike.shape
        out = np.empty((variants, self.points, probes, QUANTITIES))
        out[..., self.alike_columns] = self.alike
        out[..., self.varying_columns] = self.varying
        return out


def _columns(costs: TurnCosts, work: Work, cached: np.ndarray) -> list[np.ndarray]:
    """Every quantity's values, (points, probes) or held once, in ``QUANTITIES`` order."""
    stages = [costs.stage_s[stage] for stage in STAGES]
    return [
        *stages,
        costs.ttft_s,
        costs.api_cpu_s,
        costs.safety_cpu_s,
        cached,
        work.prompt_tokens_uncached,
    ]


def _varies(values: np.ndarray) -> bool:
    return np.ndim(values) == 2 and values.shape[0] > 1
