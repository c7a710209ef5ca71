"""The fleet around one scenario: how many agents load it and what capacity serves them."""

from __future__ import annotations

from typing import Literal

from models.distributions import Distribution
from models.fields import Section, param
from models.stages import Pool
from models.strict import Float, Int


class Load(Section):
    """Who sends rollouts: a closed population of agents or an open stream of rollouts."""

    kind: Literal["closed", "open"] = param(
        "closed: `agents` run rollouts back to back; open: rollouts arrive as a Poisson process",
        "queueing-model choice",
    )
    agents: Int = param(
        "agents in the closed population (1 = the single-agent model)",
        "user choice",
        ge=1,
        le=1_000_000,
    )
    think_time_s: Distribution = param(
        "pause of an agent between two rollouts (closed load)", "assumption"
    )
    rollouts_per_s: Float = param(
        "arrival rate of rollouts (open load)", "user choice", gt=0, le=1e6
    )
    start_stagger_s: Float = param(
        "agents start uniformly spread over this window so they are not in lockstep",
        "assumption",
        ge=0,
        le=86400,
    )
    warmup_s: Float = param(
        "simulated time always cut before measuring (the system fills up); MSER-5 may cut more",
        "run-length choice",
        ge=0,
        le=86400,
    )
    duration_s: Float = param(
        "measured window after the warm-up", "run-length choice", gt=0, le=864000
    )
    replications: Int = param(
        "independent replications (confidence intervals across them)",
        "run-length choice",
        ge=2,
        le=1000,
    )


class Capacity(Section):
    """Contended resources shared by every agent of the fleet."""

    api_workers: Int = param(
        "API worker pool: validate, state_load, render, route and post each hold one worker",
        "assumption: a cell of 8 hosts x 8 worker processes; docs/load.md",
        ge=1,
        le=10_000_000,
    )
    safety_workers: Int = param(
        "safety-classifier pool: the blocking classifiers hold one worker, the parallel ones "
        "another for their whole run alongside prefill",
        "assumption: half the API workers (accelerator-served classifiers); docs/load.md",
        ge=1,
        le=10_000_000,
    )
    state_store_slots: Int = param(
        "concurrent reads the persistent state store serves",
        "assumption: one per API worker, so reads never queue; docs/load.md",
        ge=1,
        le=10_000_000,
    )
    inference_replicas: Int = param(
        "model replicas serving the fleet",
        "assumption: enough that inference is not the bottleneck at the HTTP capacity; "
        "docs/load.md",
        ge=1,
        le=1_000_000,
    )
    streams_per_replica: Int = param(
        "concurrent request streams (batch slots) per replica",
        "assumption: a modest continuous batch; docs/load.md",
        ge=1,
        le=4096,
    )
    decode_slowdown_per_stream: Float = param(
        "batching curve: per-stream decode rate = rate / (1 + this x (streams on the replica - 1))",
        "assumption: memory-bound decode where batching raises throughput sublinearly",
        ge=0,
        le=1,
    )

    @property
    def inference_slots(self) -> int:
        return self.inference_replicas * self.streams_per_replica

    def servers(self) -> dict[Pool, int]:
        """How many servers each pool has."""
        return {
            Pool.API: self.api_workers,
            Pool.STATE_STORE: self.state_store_slots,
            Pool.SAFETY: self.safety_workers,
            Pool.INFERENCE: self.inference_slots,
        }
