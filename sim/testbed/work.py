"""What the emulator processed for one request, as the ``Work`` the cost formulas take.

The server counts items and tokens in what it received and loaded; the same
``models.costs.stage_costs`` that the simulation uses turns them into stage
delays.  The scopes mirror ``sim.turn.transports``: a request on a cache hit
processes only its new input; anything else (HTTP, a new WebSocket, a store
reload) rebuilds the whole conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum

import numpy as np

from models.scenario import Scenario
from models.work import Work


class Source(StrEnum):
    """Where a request's previous state came from."""

    NONE = "none"
    """A new chain (or the whole history resent)."""
    CACHE = "cache"
    """The connection's in-memory cache."""
    STORE = "store"
    """The persistent store."""


@dataclass(frozen=True)
class Processed:
    """Counts of one request as the server saw them."""

    http: bool
    source: Source
    items_new: int
    items_in_context: int
    fixed_tokens: float
    new_tokens: float
    prior_tokens: float
    fixed_changed: bool
    """Instructions or tool definitions differ from the cached response's (cache hits only)."""
    render_hit: bool
    """An HTTP request landed where its render cache is (the scripted draw)."""
    output_tokens: float
    decode_s_per_token: float


def request_work(scenario: Scenario, p: Processed) -> Work:
    """The scope of work of one request (arrays of one turn)."""
    a = scenario.api
    cached = p.source is Source.CACHE
    context = p.prior_tokens + p.new_tokens
    full = p.fixed_tokens + context
    if cached:
        rendered = p.new_tokens + (p.fixed_tokens if p.fixed_changed else 0.0)
    elif p.http and p.render_hit:
        rendered = p.new_tokens
    else:
        rendered = full
    rebuild = 0.0 if cached else 1.0
    reused = prefix_reuse(scenario, p)
    config_cache = float(a.config_cache)
    values = {
        "items_new": p.items_new,
        "items_sent": p.items_new,
        "tokens_sent": p.fixed_tokens + p.new_tokens,
        "http_request": float(p.http),
        "validate_runs": 1.0,
        "items_validated": p.items_new if cached else p.items_in_context,
        "store_loads": float(p.source is Source.STORE),
        "store_state_tokens": p.prior_tokens if p.source is Source.STORE else 0.0,
        "memory_loads": float(cached),
        "tokens_rendered": rendered,
        "route_full": rebuild * (1 - config_cache),
        "route_cached": rebuild * config_cache,
        "hop_runs": rebuild,
        "safety_runs": 1.0,
        "tokens_classified": p.new_tokens if cached else full,
        "prompt_tokens_uncached": p.new_tokens + (1 - reused) * (p.fixed_tokens + p.prior_tokens),
        "prompt_tokens": full,
        "output_tokens": p.output_tokens,
        "decode_s_per_token": p.decode_s_per_token,
        "post_runs": 1.0,
        "post_tokens": p.output_tokens,
        "post_blocking": float(p.http),
    }
    return Work(**{f.name: np.array([values.get(f.name, 0.0)], dtype=float) for f in fields(Work)})


def prefix_reuse(scenario: Scenario, p: Processed) -> float:
    """The share of the fixed part and the history whose KV the request reuses: none for a
    request without state where reuse needs it (``inference.prefix_reuse_needs_state``)."""
    i = scenario.inference
    stateless = float(p.source is Source.NONE)
    return i.prefix_cache_hit_fraction * (1 - float(i.prefix_reuse_needs_state) * stateless)


def failed_lookup_work() -> Work:
    """A continuation whose parent is gone: validated, looked up in memory, refused."""
    values = {"validate_runs": 1.0, "memory_loads": 1.0}
    return Work(**{f.name: np.array([values.get(f.name, 0.0)]) for f in fields(Work)})
