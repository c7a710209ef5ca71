"""The distribution of a rollout's history under compaction, turn by turn (the analytic engine).

Without compaction every per-turn input is affine in the turn number k, which
the layout's probes exploit (``sim.analytic.agent.layout``).  With compaction the
history C_k (conversation tokens of turn k's prompt) is a Markov chain:
C_0 = the task A, and with G_k = O_k + U_k the turn's output and tool outputs,

    C_(k+1) = C_k + G_k        if F + C_k + G_k < threshold,
    C_(k+1) = A + S + G_k      otherwise (a compaction request first),

F the fixed tokens and S the summary.  Its law is followed on a grid of
``CELLS`` cells below the threshold: each cell holds its probability and the
partial expectations E[C; cell] and E[items; cell], so the means are exact
and only the compaction decision sees the grid (cell s of C_k + G_k compacts
the share of it above the threshold, taken uniform over one cell).  O and U
are independent, so G's cells come from one convolution; a step is a few
FFT convolutions and correlations over the cells.  Every turn's expected
inputs follow, given it is compacted or not; the costs being linear in them,
the turn's expected cost mixes the two by P(compaction before turn k).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import correlate, fftconvolve

CELLS = 1024
"""Cells between 0 and the threshold's share of the conversation."""
TAIL = 1e-10
"""Each draw's grid reaches where its survival falls below this."""


@dataclass(frozen=True)
class ContextLaw:
    """Per turn k (arrays over turns): P(compaction before it) and conditional expectations."""

    compacted: np.ndarray
    prior_tokens: np.ndarray
    """Not compacted: the history continued, and the new input (the previous tool outputs)."""
    new_tokens: np.ndarray
    context_items: np.ndarray
    compacted_tokens: np.ndarray
    """Compacted: the whole new input (task, summary, the previous turn's output and tools)."""
    compacted_items: np.ndarray
    request_prior_tokens: np.ndarray
    """The compaction request: the history it continues, its new input and its items."""
    request_new_tokens: np.ndarray
    request_items: np.ndarray


def context_law(
    output: Any,
    tool_output: Any,
    turns: int,
    fixed_tokens: float,
    first_tokens: float,
    summary_tokens: float,
    threshold_tokens: float,
    items_added: float,
) -> ContextLaw:
    """The law of the history of a rollout's first ``turns`` turns; ``items_added`` is the
    expected number of items a tool-calling turn adds (its output items and tool outputs)."""
    h = (threshold_tokens - fixed_tokens) / CELLS
    g_mass, g_output, g_tool = _growth_cells(output, tool_output, h)
    g_tokens = g_output + g_tool
    kept = first_tokens + summary_tokens
    size = CELLS + g_mass.size + int(kept / h) + 2
    state = np.zeros((3, size))
    state[:, min(int(first_tokens / h), size - 1)] = (1.0, first_tokens, 1.0)
    out = {name: np.zeros(turns) for name in ContextLaw.__dataclass_fields__}
    out["new_tokens"][0], out["context_items"][0] = first_tokens, 1.0
    for k in range(1, turns):
        mass, tokens, items = state
        p = _convolve(mass, g_mass)
        before = _convolve(tokens, g_mass) + _convolve(mass, g_output)
        tool = _convolve(mass, g_tool)
        held = _convolve(items, g_mass) + items_added * p
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(p > 0, (before + tool) / p, 0.0)
        due = np.clip((fixed_tokens + mean - threshold_tokens) / h + 0.5, 0.0, 1.0)
        stay = 1.0 - due
        by_growth = np.maximum(correlate(due, mass, mode="valid", method="fft"), 0.0)
        by_state = np.maximum(correlate(due, g_mass, mode="valid", method="fft"), 0.0)
        compacted = float(np.clip(g_mass @ by_growth, 0.0, 1.0))
        going = 1.0 - compacted
        out["compacted"][k] = compacted
        out["prior_tokens"][k] = _ratio(stay @ before, going)
        out["new_tokens"][k] = _ratio(stay @ tool, going)
        out["context_items"][k] = _ratio(stay @ held, going)
        out["compacted_tokens"][k] = kept + _ratio(g_tokens @ by_growth, compacted)
        out["compacted_items"][k] = 2.0 + items_added
        prior = tokens @ by_state + g_output @ by_growth
        out["request_prior_tokens"][k] = _ratio(prior, compacted)
        out["request_new_tokens"][k] = _ratio(g_tool @ by_growth, compacted)
        out["request_items"][k] = _ratio(items @ by_state, compacted) + items_added
        restarted = g_mass * by_growth
        state = _binned(
            h,
            size,
            np.concatenate([stay * p, restarted]),
            np.concatenate([stay * (before + tool), kept * restarted + g_tokens * by_growth]),
            np.concatenate([stay * held, (2.0 + items_added) * restarted]),
        )
    return ContextLaw(**out)


def _growth_cells(output: Any, tool_output: Any, h: float) -> tuple[np.ndarray, ...]:
    """G = O + U on cells of width ``h``: P(cell), E[O; cell], E[U; cell]."""
    o_mass, o_tokens = _cells(output, h)
    u_mass, u_tokens = _cells(tool_output, h)
    mass = _convolve(o_mass, u_mass)
    output_part = _convolve(o_tokens, u_mass)
    tool_part = _convolve(o_mass, u_tokens)
    binned = _binned(h, mass.size, mass, output_part + tool_part, output_part)
    g_mass, g_tokens, g_output = binned
    return g_mass, g_output, g_tokens - g_output


def _cells(distribution: Any, h: float) -> tuple[np.ndarray, np.ndarray]:
    """P(X in cell i) and E[X; cell i] for cells [i h, (i + 1) h), the tail in the last.

    The grid stops at ``CELLS`` cells, the threshold's share: a growth past it compacts
    whatever the history, so the tail needs only its probability and its partial
    expectation (exact), not its position.
    """
    high = h
    while distribution.survival(high) > TAIL and high < CELLS * h:
        high *= 2
    edges = np.arange(min(int(np.ceil(high / h)), CELLS) + 1) * h
    survival = np.asarray(distribution.survival(edges), dtype=float)
    survival[0] = 1.0
    mass = survival[:-1] - survival[1:]
    partial = edges[:-1] * survival[:-1] - edges[1:] * survival[1:]
    partial += distribution.partial_expectation(edges[:-1]) - distribution.partial_expectation(
        edges[1:]
    )
    mass[-1] += survival[-1]
    partial[-1] += distribution.partial_expectation(edges[-1]) + edges[-1] * survival[-1]
    return mass, partial


def _binned(h: float, size: int, mass: np.ndarray, *moments: np.ndarray) -> np.ndarray:
    """Probability and partial moments moved to the cell of each part's conditional mean
    (the first moment); shape (1 + moments, size)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(mass > 0, moments[0] / mass, 0.0)
    cell = np.clip((mean / h).astype(np.int64), 0, size - 1)
    return np.stack([np.bincount(cell, weights=v, minlength=size) for v in (mass, *moments)])


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return fftconvolve(a, b)


def _ratio(part: float | np.ndarray, probability: float) -> float:
    """A conditional expectation E[X; A] / P(A); 0 where A has no probability.

    ``part`` is a number: the product of two vectors, which numpy's stubs type as an array.
    """
    return float(part / probability) if probability > 1e-15 else 0.0
