"""The four calibration targets of the presets (500 rollouts at the preset seed, as the
CLI runs them), and the same targets from the analytic engine."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from support import scenario

from sim.analysis.run import Engine, execute, parse_spec
from sim.analysis.summary import compare

ROLLOUTS = 500


@cache
def compared(spec_a: str, spec_b: str, engine: Engine = Engine.DES) -> dict[str, Any]:
    """``loopbudget compare SPEC_A SPEC_B --json`` computed in-process (the CLI's own path)."""
    runs = []
    for text in (spec_a, spec_b):
        spec = parse_spec(text)
        runs.append(execute(spec, scenario(spec.source), engine, ROLLOUTS))
    return json.loads(json.dumps(compare(*runs).to_json()))


ENGINES = pytest.mark.parametrize("engine", list(Engine))


@ENGINES
def test_codex_spark_websocket_is_about_40_percent_faster(engine: Engine) -> None:
    """FACTS: up to about 40% faster end to end for rollouts with 20+ tool calls."""
    result = compared("codex-spark:http", "codex-spark:ws", engine)
    assert 0.36 <= result["e2e_reduction"] <= 0.44


@ENGINES
def test_gpt5_flagship_gains_little_amdahl(engine: Engine) -> None:
    """At about 65 tokens/s decode dominates: the same API savings are a small share."""
    result = compared("gpt5-flagship:http", "gpt5-flagship:ws", engine)
    assert 0.0 < result["e2e_reduction"] <= 0.12


@ENGINES
def test_the_first_sprint_cut_ttft_by_about_45_percent(engine: Engine) -> None:
    """FACTS: close to 45% better time to first token after the first sprint."""
    result = compared("responses-2025:http", "codex-spark:http", engine)
    assert 0.40 <= result["ttft_reduction"] <= 0.50


@ENGINES
def test_ws_append_is_the_lower_bound(engine: Engine) -> None:
    means = {
        transport: compared("codex-spark:http", f"codex-spark:{transport}", engine)["b"]["e2e_s"][
            "mean"
        ]
        for transport in ("http", "ws", "ws-append")
    }
    assert means["ws-append"] <= means["ws"] <= means["http"]


def test_the_paired_confidence_interval_lies_inside_the_target_band() -> None:
    result = compared("codex-spark:http", "codex-spark:ws")
    low, high = result["e2e_reduction_ci95"]
    assert 0.36 <= low < result["e2e_reduction"] < high <= 0.44


def test_reductions_are_one_minus_the_ratio_of_means() -> None:
    result = compared("codex-spark:http", "codex-spark:ws")
    a, b = result["a"], result["b"]
    assert result["e2e_reduction"] == pytest.approx(
        1 - b["e2e_s"]["mean"] / a["e2e_s"]["mean"], rel=1e-12
    )
    assert result["ttft_reduction"] == pytest.approx(
        1 - b["ttft_s"]["mean"] / a["ttft_s"]["mean"], rel=1e-12
    )
    api = "api_cpu_s_per_rollout"
    assert result["api_cpu_reduction"] == pytest.approx(1 - b[api] / a[api], rel=1e-12)
