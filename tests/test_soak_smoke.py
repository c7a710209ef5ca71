"""Smoke test of the soak benchmark at a tiny size: structure only, never timing."""

from __future__ import annotations

import pytest

from benchmarks.soak import MEMORY_BOUND_MB, soak

pytestmark = [pytest.mark.live, pytest.mark.slow]


def test_a_tiny_soak_reports_the_server_up_answering_and_holding_its_connections() -> None:
    results = soak(idle=50, agents=4, duration_s=2.0)
    assert results["stayed_up"] and results["answered_afterwards"]
    assert results["responses_completed"] >= 4
    assert results["server_sockets_peak"] >= 50 + 4
    memory = results["server_rss_mb"]
    assert 0 < memory["baseline"] <= memory["peak"]
    assert results["within_bound"] == (memory["peak"] <= MEMORY_BOUND_MB)
