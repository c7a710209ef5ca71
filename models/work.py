"""``Work``: the scope of work a turn asks of the service, per turn, as arrays over turns.

How many items and tokens are sent, validated, rendered and classified, and which fixed
steps run. Flags are 0/1 for one simulated turn or probabilities for an expected turn, so
the same record serves the discrete-event engine (drawn values) and the analytic engine
(expected values); ``models.costs`` turns it into seconds per stage."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Work:
    """Scope of one or many turns. Token and item counts, 0/1 (or probability) flags, seconds."""

    items_new: np.ndarray
    items_sent: np.ndarray
    tokens_sent: np.ndarray
    http_request: np.ndarray
    connect_http: np.ndarray
    connect_ws: np.ndarray
    recover: np.ndarray
    validate_runs: np.ndarray
    items_validated: np.ndarray
    store_loads: np.ndarray
    store_state_tokens: np.ndarray
    memory_loads: np.ndarray
    tokens_rendered: np.ndarray
    route_full: np.ndarray
    route_cached: np.ndarray
    hop_runs: np.ndarray
    safety_runs: np.ndarray
    tokens_classified: np.ndarray
    prompt_tokens_uncached: np.ndarray
    prompt_tokens: np.ndarray
    """The whole prompt in context when prefill ends (what decode attends to)."""
    output_tokens: np.ndarray
    decode_s_per_token: np.ndarray
    post_runs: np.ndarray
    post_tokens: np.ndarray
    post_blocking: np.ndarray
    tool_overlaps_post: np.ndarray
    """1 where the tool starts at the function call item and so runs alongside post work."""
    tool_s: np.ndarray
    failed_early: np.ndarray
    """Failed attempts answered before inference; ``failed_late`` after prefill."""
    failed_late: np.ndarray
    retry_wait_s: np.ndarray
    compactions: np.ndarray
    """Compaction requests sent before this turn's own (0/1, or a probability)."""

    def blend(self, other: Work, weight_self: np.ndarray) -> Work:
        """Per turn, ``weight_self`` of this work plus the rest of ``other`` (select or mix)."""
        w = np.asarray(weight_self, dtype=float)
        return Work(
            **{
                f.name: w * getattr(self, f.name) + (1 - w) * getattr(other, f.name)
                for f in fields(self)
            }
        )
