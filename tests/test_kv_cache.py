"""One replica's prefix cache against theory: LRU against Che's approximation on an
independent reference stream, the time-to-live, and what pinning keeps."""

from __future__ import annotations

import numpy as np
import pytest
from che_reference import characteristic_time_s, hit_rate

from models.kv_cache import Eviction
from sim.des.replica_prefixes import ReplicaPrefixes

REQUESTS = 120_000
WARMUP = 20_000
CHE_TOLERANCE = 0.01
"""Che's approximation is within a few tenths of a percent of LRU under the independent
reference model at these sizes (Fricker, Robert and Roberts 2012); the sampling error of
100,000 requests is about 0.16%."""


def lru_hit_rate(popularity: np.ndarray, sizes: np.ndarray, capacity: float, seed: int) -> float:
    """The hit share of an independent reference stream (item i with probability
    ``popularity[i]``, one request per unit of time) through a ``ReplicaPrefixes``."""
    cache = ReplicaPrefixes(capacity, ttl_s=1e12, eviction=Eviction.LRU)
    items = np.random.default_rng(seed).choice(popularity.size, REQUESTS, p=popularity)
    hits = 0
    for step, item in enumerate(items.tolist()):
        found = cache.take(item, float(step))
        if step >= WARMUP:
            hits += found > 0
        cache.give_back(item, float(sizes[item]), float(step))
    return hits / (REQUESTS - WARMUP)


@pytest.mark.parametrize(
    ("items", "zipf", "capacity", "sized"),
    [(400, 0.8, 80.0, False), (300, 1.0, 20.0, False), (200, 0.7, 400.0, True)],
    ids=["zipf-0.8-unit", "zipf-1.0-small-cache", "zipf-0.7-sizes"],
)
def test_lru_hit_rate_is_ches_approximation(
    items: int, zipf: float, capacity: float, sized: bool
) -> None:
    weights = 1.0 / np.arange(1, items + 1) ** zipf
    popularity = weights / weights.sum()
    # Sizes drawn independently of popularity, as the approximation's variable-size form
    # assumes; integers, so the cache's sums are exact.
    sizes = (
        np.random.default_rng(5).integers(1, 8, items).astype(float) if sized else np.ones(items)
    )
    simulated = lru_hit_rate(popularity, sizes, capacity, seed=items)
    assert abs(simulated - hit_rate(popularity, sizes, capacity)) < CHE_TOLERANCE
    assert 0.1 < simulated < 0.9, "the cache is neither trivially full nor empty"


def test_every_item_fits_and_che_gives_an_infinite_characteristic_time() -> None:
    assert characteristic_time_s(np.ones(5), np.ones(5), 5.0) == np.inf
    assert hit_rate(np.ones(5), np.ones(5), 5.0) == 1.0


@pytest.mark.parametrize("eviction", list(Eviction))
def test_a_prefix_idle_longer_than_its_ttl_is_gone_and_one_within_it_is_whole(
    eviction: Eviction,
) -> None:
    cache = ReplicaPrefixes(1e9, ttl_s=5.0, eviction=eviction)
    cache.give_back(1, 3000.0, now_s=0.0)
    cache.give_back(2, 4000.0, now_s=0.0)
    assert cache.take(1, now_s=5.0) == 3000.0
    assert cache.take(2, now_s=5.0 + 1e-9) == 0.0
    assert cache.held_tokens == 3000.0, "the expired entry no longer holds memory"


def test_lru_evicts_the_least_recently_used_and_pinning_keeps_it() -> None:
    """Two idle prefixes of 6 tokens do not fit in 10: LRU keeps the newer, a pinned cache
    keeps the older (within its time-to-live) and does not keep the newer."""
    lru = ReplicaPrefixes(10.0, ttl_s=100.0, eviction=Eviction.LRU)
    pinned = ReplicaPrefixes(10.0, ttl_s=100.0, eviction=Eviction.TTL_PIN)
    for cache in (lru, pinned):
        cache.give_back(1, 6.0, now_s=0.0)
        cache.give_back(2, 6.0, now_s=1.0)
    assert (lru.take(1, 2.0), lru.take(2, 2.0)) == (0.0, 6.0)
    assert (pinned.take(1, 2.0), pinned.take(2, 2.0)) == (6.0, 0.0)
    assert pinned.held_tokens == lru.held_tokens == 6.0


def test_an_entry_in_use_is_never_evicted() -> None:
    cache = ReplicaPrefixes(10.0, ttl_s=100.0, eviction=Eviction.LRU)
    cache.give_back(1, 6.0, now_s=0.0)
    assert cache.take(1, now_s=1.0) == 6.0
    cache.give_back(2, 6.0, now_s=2.0)
    assert cache.take(2, now_s=3.0) == 0.0, "the only idle entry gave way to the running one"
    cache.give_back(1, 7.0, now_s=4.0)
    assert cache.take(1, now_s=5.0) == 7.0
