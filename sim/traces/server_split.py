"""What the service says about its own time, and the inference fields it sets.

Over WebSocket mode the Responses API follows each response with a
``responsesapi.websocket_timing`` event whose metrics split the response's span
into the engine's time (``engine_service_total_ms``: prefill and decode;
``engine_service_ttft_total_ms``: prefill) and the API overhead (the rest).  Where
a trace has them (``loopbudget record`` keeps them, so does the testbed's
``--otel``), the inference fields come from the engine's own times rather than from
what the client saw, which also holds the network and the API:

- ``inference.prefill_tps`` and ``inference.overhead_ms`` from a least-squares line
  of the engine's time to first token on the uncached input tokens (the slope's
  reciprocal and the intercept), the rate kept only where the slope is at least
  three standard errors above zero;
- ``inference.decode_tps`` from each request's output tokens over the engine's
  decode time (its total less its time to first token).

The API overhead and ``openai-processing-ms`` set the API's costs in the
calibration (``calibrate``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from sim.traces.measures import Measured

MIN_REQUESTS = 10
"""Requests with the engine's times a fit needs."""
ENGINE_TOTAL = "the WebSocket timing's engine_service_total_ms"
ENGINE_TTFT = "engine_service_ttft_total_ms"


@dataclass(frozen=True)
class EngineFit:
    """The inference fields the engine's own times give."""

    overhead_ms: float
    prefill_tps: float | None
    """None: the slope on uncached tokens did not stand out from its error."""
    decode_rates_tps: np.ndarray
    n: int
    prefill_source: str


def engine_fit(m: Measured, assumed_prefill_tps: float) -> EngineFit | None:
    """Prefill, fixed overhead and decode rates from the WebSocket timing (None: too few);
    where the slope does not stand out, the overhead is what the assumed prefill rate leaves."""
    if m.engine_s.size < MIN_REQUESTS:
        return None
    decode_s = m.engine_s - m.engine_ttft_s
    keep = decode_s > 0
    rates = m.engine_output_tokens[keep] / decode_s[keep]
    tokens, ttft_s = m.engine_uncached_tokens, m.engine_ttft_s
    n = int(ttft_s.size)
    prefill_tps = None
    if np.ptp(tokens) > 0:
        line = stats.linregress(tokens, ttft_s)
        if line.slope > 3 * line.stderr:
            prefill_tps = float(1.0 / line.slope)
            overhead_ms = max(float(line.intercept), 0.0) * 1e3
            how = (
                f"n = {n}, {ENGINE_TTFT} = {overhead_ms:.2f} ms + uncached input tokens / "
                f"{prefill_tps:,.0f} tokens/s (least squares, R^2 = {line.rvalue**2:.3f})"
            )
            return EngineFit(overhead_ms, prefill_tps, rates, n, how)
    overhead_ms = max(float(ttft_s.mean() - tokens.mean() / assumed_prefill_tps), 0.0) * 1e3
    how = (
        f"n = {n}, mean {ENGINE_TTFT} less the assumed prefill of the mean uncached input "
        "(no slope on uncached tokens stood out)"
    )
    return EngineFit(overhead_ms, prefill_tps, rates, n, how)
