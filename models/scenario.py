"""The scenario tree: one typed, validated, immutable description of a run.

Every field carries its unit in its name, a description, an allowed range and
(in ``json_schema_extra["source"]``) where its value comes from or which
assumption it is.  Values live in the preset TOML files; the tree holds no
defaults so that nothing is silently assumed.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import field_validator, model_validator

from models.client import Client, Connection, Network
from models.compaction import Compaction
from models.distributions import Distribution
from models.fields import Section, param
from models.fleet import Capacity, Load
from models.hardware import hardware_profiles, profile_fields
from models.kv_cache import KvCache
from models.rate_limit import RateLimit
from models.retries import Retries
from models.strict import Bool, Float, Int
from models.workload import Workload


class Api(Section):
    """The API service's own work before and after inference."""

    validate_fixed_ms: Float = param("request validation, fixed", "assumption", ge=0, le=1e4)
    validate_per_item_ms: Float = param(
        "request validation per input item processed", "assumption", ge=0, le=1e3
    )
    state_store_fixed_ms: Float = param(
        "loading previous state from persistent storage, fixed", "assumption", ge=0, le=1e4
    )
    state_store_per_kb_ms: Float = param(
        "loading previous state from persistent storage, per KB", "assumption", ge=0, le=1e3
    )
    state_bytes_per_token: Float = param(
        "bytes of stored conversation state per token", "assumption", gt=0, le=1e3
    )
    memory_state_ms: Float = param(
        "loading previous state from the connection's in-memory cache",
        "assumption",
        ge=0,
        le=1e3,
    )
    render_per_1k_tokens_ms: Float = param(
        "rendering and tokenizing the context, per 1k tokens", "assumption", ge=0, le=1e4
    )
    render_cache_hit_prob: Float = param(
        "probability an HTTP request lands where its in-memory render cache is "
        "(0 = no render cache, as before the first sprint)",
        "assumption",
        ge=0,
        le=1,
    )
    route_ms: Float = param(
        "model resolution, configuration and routing without a config cache",
        "assumption",
        ge=0,
        le=1e4,
    )
    config_cache: Bool = param(
        "in-memory cache of model configuration (the first sprint)", "FACTS: first sprint"
    )
    route_cached_ms: Float = param(
        "routing with the configuration cached", "assumption", ge=0, le=1e4
    )
    intermediate_hops: Int = param(
        "calls to intermediate services (0 after the first sprint)",
        "FACTS: first sprint removed them",
        ge=0,
        le=20,
    )
    hop_ms: Float = param("time of one intermediate-service call", "assumption", ge=0, le=1e4)
    post_fixed_ms: Float = param(
        "post-inference work (billing, logging, persisting), fixed", "assumption", ge=0, le=1e4
    )
    post_per_1k_tokens_ms: Float = param(
        "post-inference work per 1k output tokens", "assumption", ge=0, le=1e4
    )

    @model_validator(mode="after")
    def _cached_route_not_slower(self) -> Api:
        if self.route_cached_ms > self.route_ms:
            raise ValueError(
                f"api.route_cached_ms ({self.route_cached_ms}) must be <= "
                f"api.route_ms ({self.route_ms})"
            )
        return self


class Safety(Section):
    """Safety classifiers over the input."""

    blocking_fixed_ms: Float = param(
        "classifiers that must finish before inference, fixed", "assumption", ge=0, le=1e4
    )
    blocking_per_1k_tokens_ms: Float = param(
        "blocking classifiers per 1k tokens classified", "assumption", ge=0, le=1e4
    )
    parallel_fixed_ms: Float = param(
        "classifiers that run alongside prefill, fixed (only the excess delays)",
        "assumption",
        ge=0,
        le=1e4,
    )
    parallel_per_1k_tokens_ms: Float = param(
        "parallel classifiers per 1k tokens classified", "assumption", ge=0, le=1e4
    )


MAX_S_PER_TOKEN = 10.0
"""Upper bound on E[1 / decode rate]: slower decoding is outside the model."""


class Inference(Section):
    """The accelerators serving the model; rates default to the hardware profile."""

    hardware: str = param("hardware profile name (see `models/hardware.toml`)", "registry")
    prefill_tps: Float = param("prompt tokens processed per second", "hardware profile", ge=1)
    decode_tps: Distribution = param(
        "output tokens per second, drawn per turn (bursts)", "hardware profile"
    )
    overhead_ms: Float = param(
        "fixed inference overhead per request (scheduling, first kernel launches)",
        "hardware profile",
        ge=0,
        le=1e4,
    )
    prefix_cache_hit_fraction: Float = param(
        "fraction of the resident prior context whose KV cache is reused (block granularity, "
        "items the server renders differently); with kv_cache.residency off every prefix "
        "counts as resident, so it is the hit fraction of every turn and transport",
        "assumption",
        ge=0,
        le=1,
    )
    prefill_ms_per_token_per_1k_context_tokens: Float = param(
        "each 1,000 tokens already in context add this to every prefilled token's time "
        "(attention reads the keys and values before it); 0: prefill time is linear in the "
        "tokens prefilled",
        "profiled (`loopbudget profile`); 0 in the presets (API rates fold context in)",
        ge=0,
        le=1e3,
        default=0.0,
    )
    decode_ms_per_token_per_1k_context_tokens: Float = param(
        "each 1,000 tokens in context add this to every output token's time (each step reads "
        "the whole KV); 0: the drawn decode rate alone",
        "profiled (`loopbudget profile`); 0 in the presets (API rates fold context in)",
        ge=0,
        le=1e3,
        default=0.0,
    )
    prefix_reuse_needs_state: Bool = param(
        "true: a prompt's KV is reused only where the conversation's state is (a WebSocket "
        "connection's cache, the store's sessions), so a request without it (a new chain, "
        "the history resent) prefills its whole prompt; false: every request reuses "
        "prefix_cache_hit_fraction of its resident prefix",
        "false in the presets (prompt caching by prefix); true for the testbed's real engine",
        default=False,
    )
    kv_memory_bytes: Float = param(
        "accelerator memory per replica left for KV after the weights",
        "hardware profile",
        gt=0,
        le=1e15,
    )
    kv_bytes_per_token: Float = param(
        "bytes of keys and values per token (layers x KV heads x head size x 2 x bytes)",
        "hardware profile",
        gt=0,
        le=1e8,
    )

    @property
    def kv_capacity_tokens(self) -> float:
        """Tokens of KV one replica holds."""
        return self.kv_memory_bytes / self.kv_bytes_per_token

    @model_validator(mode="before")
    @classmethod
    def _fill_from_profile(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "hardware" not in data:
            return data
        name = data["hardware"]
        profile = hardware_profiles().get(name) if isinstance(name, str) else None
        if profile is None:
            return data
        return {**profile_fields(profile), **data}

    @field_validator("hardware")
    @classmethod
    def _known_hardware(cls, value: str) -> str:
        if value not in hardware_profiles():
            allowed = ", ".join(sorted(hardware_profiles()))
            raise ValueError(f"unknown hardware profile; allowed: {allowed}")
        return value

    @field_validator("decode_tps")
    @classmethod
    def _finite_time_per_token(cls, value: Any) -> Any:
        s_per_token = value.mean_reciprocal()
        if not math.isfinite(s_per_token) or s_per_token <= 0:
            raise ValueError(
                "must stay away from zero (E[1/rate] finite): use constant > 0, "
                "lognormal, uniform with low > 0, or a mixture of those"
            )
        if s_per_token > MAX_S_PER_TOKEN:
            raise ValueError(
                f"E[1/rate] = {s_per_token:.3g} s per token: at most {MAX_S_PER_TOKEN:g} "
                f"(an average rate of at least {1 / MAX_S_PER_TOKEN:g} tokens/s)"
            )
        return value


class Scenario(Section):
    """A complete, validated scenario."""

    name: str = param("scenario name", "preset file", min_length=1)
    description: str = param("one-line description", "preset file")
    seed: Int = param("root random seed", "user choice", ge=0, le=2**63 - 1)
    workload: Workload
    client: Client
    network: Network
    api: Api
    safety: Safety
    inference: Inference
    kv_cache: KvCache
    connection: Connection
    retries: Retries
    rate_limit: RateLimit
    compaction: Compaction
    load: Load
    capacity: Capacity

    @property
    def on_fleet(self) -> bool:
        """More than one agent, open arrivals or a rate limit: contention and the gateway's
        buckets need the fleet engine."""
        load = self.load
        return load.kind == "open" or load.agents > 1 or self.rate_limit.limits

    @model_validator(mode="after")
    def _compaction_leaves_room(self) -> Scenario:
        """A threshold the prompt after a compaction reaches in one turn compacts every turn."""
        c, w = self.compaction, self.workload
        if not c.compacts:
            return self
        fixed = w.instructions_tokens + w.tool_definitions_tokens
        growth = w.mean_history_growth_tokens(c.tool_output_cap_tokens)
        kept = fixed + w.first_message_tokens + c.summary_tokens + growth
        if kept >= c.threshold_tokens:
            raise ValueError(
                f"compaction.threshold_tokens ({c.threshold_tokens:,.0f}) must exceed the prompt "
                f"right after a compaction plus one turn: instructions and tool definitions "
                f"({fixed:,.0f}) + the task ({w.first_message_tokens:,.0f}) + "
                f"compaction.summary_tokens ({c.summary_tokens:,.0f}) + one turn's expected "
                f"growth ({growth:,.0f}) = {kept:,.0f}; at or below it every turn compacts"
            )
        return self
