"""Published decode speeds the front-ends mark (FACTS; vendor-reported, not measured here)."""

from __future__ import annotations

FLAGSHIP_DECODE_TPS = 65.0
"""GPT-5 / GPT-5.2-class flagships through the Responses API: about 65 tokens/s."""
SPARK_DECODE_TPS = 1000.0
"""GPT-5.3-Codex-Spark on Cerebras: over 1,000 tokens/s sustained in production."""
SPARK_BURST_DECODE_TPS = 4000.0
"""Codex-Spark's bursts: up to 4,000 tokens/s."""

DECODE_MARKS: dict[float, str] = {
    FLAGSHIP_DECODE_TPS: "flagship",
    SPARK_DECODE_TPS: "Codex-Spark",
    SPARK_BURST_DECODE_TPS: "bursts",
}
"""Each published decode speed (tokens/s) and what it stands for, as a chart marks it."""
