"""The ``[retries]`` section: server errors and the client's retry policy (the openai SDK's)."""

from __future__ import annotations

from pydantic import model_validator

from models.fields import Section, param
from models.strict import Float, Int


class Retries(Section):
    """Server errors and the client's retry policy (the openai SDK's)."""

    server_error_prob: Float = param(
        "probability that an attempt fails with a retryable status, independently per attempt",
        "assumption (0: no errors)",
        ge=0,
        le=0.5,
    )
    early_error_fraction: Float = param(
        "status mix: share of failures answered before inference (502/503 from a gateway); "
        "the rest are 500s after prefill, costing the attempt up to its first token",
        "assumption",
        ge=0,
        le=1,
    )
    max_retries: Int = param(
        "retries per SDK call; after that the agent loop sends the request again at once",
        "FACTS: openai SDK DEFAULT_MAX_RETRIES = 2",
        ge=0,
        le=20,
    )
    initial_retry_delay_s: Float = param(
        "backoff before the first retry, doubling per retry",
        "FACTS: openai SDK INITIAL_RETRY_DELAY = 0.5 s",
        ge=0,
        le=60,
    )
    max_retry_delay_s: Float = param(
        "cap on the doubled backoff", "FACTS: openai SDK MAX_RETRY_DELAY = 8 s", ge=0, le=600
    )
    retry_jitter_fraction: Float = param(
        "the backoff is reduced by a uniform random fraction of up to this much",
        "FACTS: openai SDK, jitter = 1 - 0.25 * random()",
        ge=0,
        le=1,
    )

    @model_validator(mode="after")
    def _cap_not_below_start(self) -> Retries:
        if self.max_retry_delay_s < self.initial_retry_delay_s:
            raise ValueError(
                f"retries.max_retry_delay_s ({self.max_retry_delay_s}) must be >= "
                f"retries.initial_retry_delay_s ({self.initial_retry_delay_s})"
            )
        return self
