"""Each stage of the real backend measured alone, outside any agent loop, and fitted.

- prefill: the whole prompt of conversations of growing length from an empty
  context, and continuations of each (a tool's output of several sizes) after
  its KV is restored: ``prefill_s = a + U / prefill_tps + k U (C - U / 2) / 1000``
  for U tokens prefilled reaching a context of C tokens (the intercept is the
  fixed part, ``overhead_ms``; ``k`` the context term);
- decode: tokens generated after each continuation,
  ``s_per_token = 1 / decode_tps + k (C + N / 2) / 1000`` at a context of C for N tokens;
- restoring a conversation's KV (per 1,000 tokens), validation (fixed and per item) and
  rendering with o200k counting (per 1,000 tokens).

Tokens are the scenario's (``bytes_per_token`` characters of the testbed's text).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.scenario import Scenario
from sim.testbed.engine.kv import KvStore
from sim.testbed.engine.model import DEFAULT_THREADS, MODEL_NAME, open_model
from sim.testbed.engine.render import continuation, count_tokens, full_prompt, o200k
from sim.testbed.engine.runner import Runner
from sim.testbed.engine.validate import validate_items, warm_up
from sim.testbed.profiling.conversation import Conversation, conversation, tool_answer
from sim.testbed.profiling.fit import Fit, linear_fit
from sim.testbed.profiling.profile_file import Profile

Progress = Callable[[int], None]
_LIVE = "profiled"
SHUFFLE_SEED = 20260204


@dataclass(frozen=True)
class Plan:
    """What to measure: context lengths (tool round trips), continuation sizes, repetitions."""

    turns: tuple[int, ...] = (0, 4, 8, 12)
    continuation_tokens: tuple[float, ...] = (40.0, 150.0, 400.0)
    decode_tokens: int = 32
    repetitions: int = 2
    validate_items: tuple[int, ...] = (1, 4, 10, 20, 37)

    @property
    def steps(self) -> int:
        each_turn = 1 + self.repetitions * len(self.continuation_tokens)
        return len(self.turns) * each_turn + 2


QUICK = Plan(turns=(0, 3), continuation_tokens=(40.0, 200.0), decode_tokens=16, repetitions=2)
"""A plan of about 30 seconds on idle cores (the test suite's)."""


def profile(
    scenario: Scenario,
    plan: Plan = Plan(),
    threads: int = DEFAULT_THREADS,
    progress: Progress | None = None,
    spec: str = "",
) -> Profile:
    """Measure every stage on ``scenario``'s text and fit the profile."""
    tick = progress or (lambda n: None)
    runner = Runner(open_model(threads), KvStore())
    warm_up()
    o200k()
    longest = conversation(scenario, max(plan.turns))
    # Grid points in a seeded random order: a shared machine's load drifts over minutes,
    # and an order that grows the context with time would read the drift as a context term.
    order = np.random.default_rng(SHUFFLE_SEED)
    prefill_rows, decode_rows, restore_rows = [], [], []
    snapshots, contexts = {}, {}
    for turns in order.permutation(plan.turns).tolist():
        base = longest.head(turns)
        contexts[turns] = base.tokens()
        whole = full_prompt(base.instructions, base.tools, base.items)
        filled = runner.prefill(None, _constant(whole), "")
        prefill_rows.append((contexts[turns], contexts[turns], filled.seconds))
        runner.finish(_LIVE, kept=False)
        snapshots[turns] = runner.snapshot()
        tick(1)
    trials = [
        (turns, tokens)
        for turns in plan.turns
        for tokens in plan.continuation_tokens
        for _ in range(plan.repetitions)
    ]
    for index in order.permutation(len(trials)).tolist():
        turns, tokens = trials[index]
        snapshot = snapshots[turns]
        restore_rows.append((len(snapshot.tokens), runner.restore(snapshot)))
        runner.finish(_LIVE, kept=False)
        answer = tool_answer(tokens, longest.bytes_per_token)
        new = longest.tokens((answer,))
        step = runner.prefill(_LIVE, lambda: "", continuation((answer,)))
        prefill_rows.append((new, contexts[turns] + new, step.seconds))
        seconds = runner.decode(plan.decode_tokens, lambda k: None)
        decode_rows.append((plan.decode_tokens, contexts[turns] + new, seconds))
        tick(1)
    validation = _validation(longest, plan)
    tick(1)
    rendering = _rendering(longest, plan)
    tick(1)
    runner.close()
    return _profile(
        scenario,
        plan,
        threads,
        spec,
        prefill_rows,
        decode_rows,
        restore_rows,
        validation,
        rendering,
    )


def _constant(text: str) -> Callable[[], str]:
    return lambda: text


_MICRO_REPETITIONS = 15
"""Repetitions of each validation and rendering size (milliseconds each, so one pause of
a loaded machine would outweigh them: each size's median is fitted)."""


def _median_rows(sizes: list[float], timed: Callable[[int], float]) -> np.ndarray:
    """(size, median seconds) of ``_MICRO_REPETITIONS`` timings of each size's index."""
    rows = []
    for index, size in enumerate(sizes):
        rows.append((size, float(np.median([timed(index) for _ in range(_MICRO_REPETITIONS)]))))
    return np.array(rows)


def _timed(work: Callable[[], object]) -> float:
    started_s = time.perf_counter()
    work()
    return time.perf_counter() - started_s


def _validation(longest: Conversation, plan: Plan) -> Fit:
    counts = [min(count, len(longest.items)) for count in plan.validate_items]
    rows = _median_rows(
        [float(c) for c in counts],
        lambda i: _timed(lambda: validate_items(longest.items[: counts[i]])),
    )
    counts_, seconds = rows.T
    design = np.column_stack([np.ones_like(counts_), counts_])
    return linear_fit(("fixed", "per_item"), design, seconds)


def _rendering(longest: Conversation, plan: Plan) -> Fit:
    bases = [longest.head(turns) for turns in plan.turns]
    rows = _median_rows(
        [base.tokens() / 1000 for base in bases],
        lambda i: _timed(
            lambda: count_tokens(full_prompt(bases[i].instructions, bases[i].tools, bases[i].items))
        ),
    )
    thousands, seconds = rows.T
    design = np.column_stack([np.ones_like(thousands), thousands])
    return linear_fit(("fixed", "per_1k"), design, seconds)


def _profile(
    scenario: Scenario,
    plan: Plan,
    threads: int,
    spec: str,
    prefill_rows: list[tuple[float, float, float]],
    decode_rows: list[tuple[int, float, float]],
    restore_rows: list[tuple[int, float]],
    validation: Fit,
    rendering: Fit,
) -> Profile:
    new, context, seconds = np.array(prefill_rows).T
    design = np.column_stack([np.ones_like(new), new, new * (context - new / 2) / 1000])
    prefill = linear_fit(("fixed", "per_token", "per_token_per_1k"), design, seconds)
    tokens, context_d, seconds_d = np.array(decode_rows, dtype=float).T
    mean_context = (context_d + tokens / 2) / 1000
    decode = linear_fit(
        ("per_token", "per_token_per_1k"),
        np.column_stack([np.ones_like(tokens), mean_context]),
        seconds_d / tokens,
    )
    restored, restore_s = np.array(restore_rows, dtype=float).T
    restore = linear_fit(("per_1k",), (restored / 1000)[:, None], restore_s)
    prefill_formula = "prefill_s = a + U/prefill_tps + k U (C - U/2)/1000 (U prefilled, C after)"
    decode_formula = "s_per_token = 1/decode_tps + k (C + N/2)/1000 (N tokens after C)"
    fields: dict[str, dict[str, Any]] = {
        "inference": {
            "prefill_tps": 1.0 / prefill["per_token"],
            "overhead_ms": max(0.0, prefill["fixed"]) * 1e3,
            "prefill_ms_per_token_per_1k_context_tokens": max(0.0, prefill["per_token_per_1k"])
            * 1e3,
            "decode_tps": {"kind": "constant", "value": 1.0 / decode["per_token"]},
            "decode_ms_per_token_per_1k_context_tokens": max(0.0, decode["per_token_per_1k"]) * 1e3,
            "prefix_cache_hit_fraction": 1.0,
            "prefix_reuse_needs_state": True,
        },
        "api": {
            "validate_fixed_ms": max(0.0, validation["fixed"]) * 1e3,
            "validate_per_item_ms": max(0.0, validation["per_item"]) * 1e3,
            "render_per_1k_tokens_ms": max(0.0, rendering["per_1k"]) * 1e3,
            "render_cache_hit_prob": 0.0,
        },
    }
    reuse = "the backend keeps a conversation's whole KV where its state is, and only there"
    sources = {
        "inference.prefill_tps": prefill.describe(prefill_formula),
        "inference.overhead_ms": prefill.describe(prefill_formula + ": a"),
        "inference.prefill_ms_per_token_per_1k_context_tokens": prefill.describe(
            prefill_formula + ": k"
        ),
        "inference.decode_tps": decode.describe(decode_formula),
        "inference.decode_ms_per_token_per_1k_context_tokens": decode.describe(
            decode_formula + ": k"
        ),
        "inference.prefix_cache_hit_fraction": reuse,
        "inference.prefix_reuse_needs_state": reuse,
        "api.validate_fixed_ms": validation.describe("validate_s = a + b items"),
        "api.validate_per_item_ms": validation.describe("validate_s = a + b items"),
        "api.render_per_1k_tokens_ms": rendering.describe("render_s = a + b tokens/1000"),
        "api.render_cache_hit_prob": "the backend renders every request without state whole",
    }
    about = {
        "model": MODEL_NAME,
        "threads": threads,
        "scenario": spec or scenario.name,
        "load_average_1m": os.getloadavg()[0],
        "cpus": os.cpu_count() or 0,
        "repetitions": plan.repetitions,
    }
    measured = {
        "kv_restore_ms_per_1k_tokens": restore["per_1k"] * 1e3,
        "kv_restore_r2": restore.r2,
        "render_fixed_ms": rendering["fixed"] * 1e3,
        "prefill_fixed_ci95_ms": prefill.half_width("fixed") * 1e3,
        "prefill_tps_ci95": prefill.half_width("per_token") / prefill["per_token"] ** 2,
        "decode_tps_ci95": decode.half_width("per_token") / decode["per_token"] ** 2,
        "decode_ms_per_token_per_1k_ci95": decode.half_width("per_token_per_1k") * 1e3,
        "prefill_ms_per_token_per_1k_ci95": prefill.half_width("per_token_per_1k") * 1e3,
    }
    return Profile(fields, sources, about, measured)
