"""One agent's clock as array passes: where each delay goes, and the readings it gives.

An agent alone never waits for anything but its own requests and tools, so its
timeline is a running sum of durations: each rollout's think time, then each
turn's request and tool, added one after the other as SimPy's clock adds them
(``now + delay``; a cumulative sum adds the same numbers one by one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Layout:
    """Where each delay of a block goes on its timeline: each rollout's think time, then
    each turn's request and tool, one after the other."""

    def __init__(self, offsets: np.ndarray) -> None:
        count = len(offsets) - 1
        turns = int(offsets[-1])
        self.think_at = 2 * offsets[:-1] + np.arange(count)
        self.request_at = 2 * np.arange(turns) + np.repeat(np.arange(count), np.diff(offsets)) + 1
        self.tool_at = self.request_at + 1
        self.start_at = self.request_at - 1
        self.rollout_end_at = 2 * offsets[1:] + np.arange(count)
        self.delays_s = np.zeros(2 * turns + count)

    def timeline(self, request_s: np.ndarray, tool_s: np.ndarray, think_s: np.ndarray) -> Timeline:
        """The readings when requests take ``request_s`` (every slot of the delays is
        written again, so one buffer serves each round of a block)."""
        delays_s = self.delays_s
        delays_s[self.think_at] = think_s
        delays_s[self.request_at] = request_s
        delays_s[self.tool_at] = tool_s
        clock_s = np.cumsum(delays_s)
        return Timeline(
            request_start_s=clock_s[self.start_at],
            request_end_s=clock_s[self.request_at],
            rollout_start_s=clock_s[self.think_at],
            rollout_end_s=clock_s[self.rollout_end_at],
        )


@dataclass(frozen=True)
class Timeline:
    """Clock readings of one agent's block, the delays added one after the other as
    SimPy's clock adds them."""

    request_start_s: np.ndarray
    request_end_s: np.ndarray
    rollout_start_s: np.ndarray
    rollout_end_s: np.ndarray
