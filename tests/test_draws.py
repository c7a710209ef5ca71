"""Small runs draw only what they keep, and keep exactly what a whole block would draw.

``reference_block`` is the way a block was drawn before: every stream drawn for
all 1,024 rollouts at once, then cut to the first rollouts.  The drawn prefix
must equal it bit for bit, for every kind of distribution and any tool mix.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from support import scenario
from test_distributions import CASES, TABLES

from models.distributions import SAMPLE_CHUNK, Distribution
from models.retry_policy import http_waits_s
from models.scenario import Scenario
from models.workload import Workload
from sim.des.draws import draw_turns
from sim.des.streams import BLOCK_ROLLOUTS, Draw, stream
from sim.turn.compaction import without_compaction
from sim.turn.turns import Turns, history

_ADAPTER = TypeAdapter(Distribution)


def reference_block(s: Scenario, block: int, replication: int = 0) -> Turns:
    """All rollouts of a block, each stream drawn in one call (the former ``_draw_block``)."""
    w = s.workload

    def rng(kind: Draw) -> np.random.Generator:
        return stream(s.seed, block, kind, replication)

    calls = w.tool_calls_per_rollout.sample(rng(Draw.TOOL_CALLS), BLOCK_ROLLOUTS)
    total = int(calls.sum()) + BLOCK_ROLLOUTS
    output = w.output_tokens.sample(rng(Draw.OUTPUT_TOKENS), total)
    tool_s, tool_output, tool_kind = _calls(
        w, rng(Draw.TOOL_KIND), rng(Draw.TOOL_TIME), rng(Draw.TOOL_OUTPUT), total
    )
    final_turns = np.cumsum(calls.astype(np.int64) + 1) - 1
    parallel = None
    if w.parallel:
        parallel = w.parallel_calls_per_turn.sample(rng(Draw.PARALLEL_CALLS), total)
        parallel[final_turns] = 0.0
        extra = np.maximum(parallel - 1, 0).astype(np.int64)
        owner = np.repeat(np.arange(total), extra)
        extra_rng = rng(Draw.EXTRA_CALLS)
        extra_s, extra_output, _ = _calls(w, extra_rng, extra_rng, extra_rng, owner.size)
        np.maximum.at(tool_s, owner, extra_s)
        tool_s = tool_s + extra * s.client.parallel_call_overhead_ms * 1e-3
        tool_output = tool_output + np.bincount(owner, weights=extra_output, minlength=total)
    tool_s[final_turns] = 0.0
    tool_output[final_turns] = 0.0
    tool_kind[final_turns] = -1
    grown = history(
        calls, output, tool_output, w.first_message_tokens, w.output_items_per_turn, parallel
    )
    rate = s.inference.decode_tps.sample(rng(Draw.DECODE_RATE), total)
    render_hit = (rng(Draw.RENDER_CACHE).random(total) < s.api.render_cache_hit_prob).astype(float)
    r = s.retries
    early = late = wait_s = np.zeros(total)
    if r.server_error_prob > 0:
        errors, jitter = rng(Draw.SERVER_ERRORS), rng(Draw.RETRY_JITTER)
        failures = errors.geometric(1.0 - r.server_error_prob, total) - 1
        owner = np.repeat(np.arange(total), failures)
        is_early = errors.random(owner.size) < r.early_error_fraction
        early = np.bincount(owner, weights=is_early, minlength=total)
        late = failures - early
        waits = http_waits_s(r, is_early, owner, jitter.random(owner.size))
        wait_s = np.bincount(owner, weights=waits, minlength=total)
    return Turns(
        **grown,
        fixed_tokens=w.instructions_tokens + w.tool_definitions_tokens,
        output_tokens=output,
        decode_s_per_token=1.0 / rate,
        tool_s=tool_s,
        render_hit=render_hit,
        missing_history_tokens=np.zeros(total),
        failed_early=early,
        failed_late=late,
        retry_wait_s=wait_s,
        **without_compaction((total,)),
        tool_kind=tool_kind,
    )


def _calls(
    w: Workload,
    kind_rng: np.random.Generator,
    time_rng: np.random.Generator,
    output_rng: np.random.Generator,
    count: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    kind = kind_rng.choice(len(w.tools), count, p=w.tool_probabilities())
    tool_s, tool_output = np.empty(count), np.empty(count)
    for index, tool in enumerate(w.tools):
        chosen = np.flatnonzero(kind == index)
        tool_s[chosen] = tool.time_s.sample(time_rng, chosen.size)
        tool_output[chosen] = tool.output_tokens.sample(output_rng, chosen.size)
    return tool_s, tool_output, kind


def assert_same_turns(drawn: Turns, expected: Turns) -> None:
    for field in fields(Turns):
        got, want = getattr(drawn, field.name), getattr(expected, field.name)
        assert np.array_equal(got, want), field.name


MIXED_WORKLOAD = (
    'workload.output_tokens={kind="mixture", weights=[2, 1], components=['
    '{kind="lognormal", median=90.0, sigma=0.5}, {kind="exponential", mean=300.0}]}',
    'workload.tools[1].time_s={kind="mixture", weights=[1, 1], components=['
    '{kind="uniform", low=0.01, high=0.2}, {kind="mixture", weights=[1, 3], components=['
    '{kind="empirical", values=[0.5, 2.0], weights=[1, 1]}, 0.3]}]}',
    'workload.tool_calls_per_rollout={kind="empirical", values=[0, 3, 60], weights=[1, 5, 1]}',
)
SCENARIOS = {
    "codex-spark": ("codex-spark",),
    "gpt5-flagship": ("gpt5-flagship",),
    "mixtures everywhere": ("codex-spark", *MIXED_WORKLOAD),
    "parallel calls and server errors": (
        "codex-spark",
        *MIXED_WORKLOAD,
        'workload.parallel_calls_per_turn={kind="empirical", values=[1, 2, 4], weights=[3, 2, 1]}',
        "retries.server_error_prob=0.2",
    ),
    "one tool kind, parallel": (
        "responses-2025",
        "workload.tools=[{name='t', weight=1.0, time_s=0.2, "
        "output_tokens={kind='lognormal', median=300.0, sigma=0.4}}]",
        'workload.parallel_calls_per_turn={kind="empirical", values=[1, 3], weights=[1, 1]}',
    ),
    "one tool kind": (
        "responses-2025",
        "workload.tools=[{name='t', weight=1.0, time_s=0.2, "
        "output_tokens={kind='lognormal', median=300.0, sigma=0.4}}]",
    ),
}


@pytest.mark.parametrize("source", SCENARIOS.values(), ids=SCENARIOS.keys())
@pytest.mark.parametrize("rollouts", [1, 2, 37, 1023, BLOCK_ROLLOUTS])
def test_the_first_rollouts_are_the_whole_blocks_first_rollouts(
    source: tuple[str, ...], rollouts: int
) -> None:
    s = scenario(*source)
    for block, replication in ((0, 0), (3, 2)):
        expected = reference_block(s, block, replication).head(rollouts)
        assert_same_turns(draw_turns(s, block, rollouts, replication), expected)


@pytest.mark.slow
def test_a_small_run_of_long_rollouts_holds_only_its_own_turns() -> None:
    """Two rollouts of 5,000 tool calls: the block has 5.1 million turns, the run keeps 10,002."""
    s = scenario("codex-spark", "workload.tool_calls_per_rollout=5000")
    turns = draw_turns(s, 0, 2)
    assert turns.count == 10_002
    assert turns.output_tokens.nbytes == 8 * 10_002
    expected = reference_block(s, 0).head(2)
    assert_same_turns(turns, expected)


@pytest.mark.parametrize("table", CASES.values(), ids=CASES.keys())
def test_a_prefix_across_chunks_leaves_the_stream_as_one_call(table: Any) -> None:
    d = _ADAPTER.validate_python(table)
    size, keep = 2 * SAMPLE_CHUNK + 5, 7
    whole_rng, prefix_rng = np.random.default_rng(5), np.random.default_rng(5)
    whole = d.sample(whole_rng, size)
    assert np.array_equal(d.sample_prefix(prefix_rng, size, keep), whole[:keep])
    assert np.array_equal(prefix_rng.random(4), whole_rng.random(4))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    table=TABLES,
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(0, 3000),
    data=st.data(),
)
def test_a_prefix_is_the_start_of_one_call_and_leaves_the_stream_as_it(
    table: Any, seed: int, size: int, data: st.DataObject
) -> None:
    d = _ADAPTER.validate_python(table)
    keep = data.draw(st.integers(0, size))
    whole_rng, prefix_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    whole = d.sample(whole_rng, size)
    assert np.array_equal(d.sample_prefix(prefix_rng, size, keep), whole[:keep])
    assert np.array_equal(prefix_rng.random(4), whole_rng.random(4))
    unfinished = d.sample_prefix(np.random.default_rng(seed), size, keep, finish=False)
    assert np.array_equal(unfinished, whole[:keep])
