"""What each stage costs, as a function of the scenario and of the work asked for.

``Work`` describes, per turn, the scope of work a transport asks for (how many
items and tokens are sent, validated, rendered, classified; which fixed steps
run).  Its fields are arrays over turns.  Flags are 0/1 for one simulated turn
or probabilities for an expected turn; every cost below is linear in the
fields except the parallel-safety excess and the context terms of prefill and
decode (a product of two work fields; zero unless a profile sets them), so the
same function serves the discrete-event engine (drawn values) and the analytic
engine (expected values; it takes the context terms at the expected counts,
leaving out their covariance).

Each formula's plain expression is in a comment; the code does its operations in
the same order, its temporaries written over (``models.in_place``): the same
numbers bit for bit, with fewer arrays the size of a block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from models.in_place import add_to, divide_by, multiply_by, positive_part, total
from models.scenario import Scenario
from models.stages import FIRST_TOKEN_STAGES, Side, Stage
from models.work import Work

_MS = 1e-3
_PER_1K = 1e-3


@dataclass(frozen=True)
class TurnCosts:
    """Seconds per stage on the critical path, plus CPU spent off it, per turn."""

    stage_s: dict[Stage, np.ndarray]
    ttft_s: np.ndarray
    api_cpu_s: np.ndarray
    safety_cpu_s: np.ndarray
    post_overlapped_s: np.ndarray
    """Post-inference work done off the critical path (overlapped with the next request)."""
    safety_parallel_s: np.ndarray
    """Work of the classifiers that run alongside prefill (part of ``safety_cpu_s``)."""

    def select(self, other: TurnCosts, take_self: np.ndarray) -> TurnCosts:
        """Per turn, this turn's costs where ``take_self`` is true, else ``other``'s."""
        mask = np.asarray(take_self, dtype=bool)
        return TurnCosts(
            stage_s={
                stage: np.where(mask, seconds, other.stage_s[stage])
                for stage, seconds in self.stage_s.items()
            },
            ttft_s=np.where(mask, self.ttft_s, other.ttft_s),
            api_cpu_s=np.where(mask, self.api_cpu_s, other.api_cpu_s),
            safety_cpu_s=np.where(mask, self.safety_cpu_s, other.safety_cpu_s),
            post_overlapped_s=np.where(mask, self.post_overlapped_s, other.post_overlapped_s),
            safety_parallel_s=np.where(mask, self.safety_parallel_s, other.safety_parallel_s),
        )

    def side_s(self, side: Side) -> np.ndarray:
        """Seconds a side holding keeps its pool's server, per turn."""
        if side is Side.PARALLEL_SAFETY:
            return self.safety_parallel_s
        return self.post_overlapped_s

    @property
    def request_s(self) -> np.ndarray:
        """From the start of the request to the end of its response (all but the tool)."""
        return total(s for stage, s in self.stage_s.items() if stage is not Stage.TOOL)

    @property
    def turn_s(self) -> np.ndarray:
        return self.request_s + self.stage_s[Stage.TOOL]


def parallel_margin_s(scenario: Scenario, work: Work) -> np.ndarray:
    """Parallel classifiers' time minus prefill's, per turn: the safety excess is its positive part.

    The one cost that is not linear in the work; an analytic engine takes its
    expectation over the distribution of the work (it is affine in the tokens).
    """
    parallel, prefill = _parallel_and_prefill_s(scenario, work)
    return parallel - prefill


def _parallel_and_prefill_s(scenario: Scenario, work: Work) -> tuple[np.ndarray, np.ndarray]:
    s, i = scenario.safety, scenario.inference
    # U / prefill_tps + overhead_ms * _MS + context(U, P - U / 2)
    prefill = add_to(work.prompt_tokens_uncached / i.prefill_tps, i.overhead_ms * _MS)
    prefill = add_to(
        prefill,
        _context_s(
            i.prefill_ms_per_token_per_1k_context_tokens,
            work.prompt_tokens_uncached,
            work.prompt_tokens - work.prompt_tokens_uncached / 2,
        ),
    )
    # (runs * fixed_ms + per_1k_ms * tokens * _PER_1K) * _MS
    parallel = multiply_by(
        add_to(
            work.safety_runs * s.parallel_fixed_ms,
            multiply_by(s.parallel_per_1k_tokens_ms * work.tokens_classified, _PER_1K),
        ),
        _MS,
    )
    return parallel, prefill


def _context_s(
    ms_per_token_per_1k: float, tokens: np.ndarray, mean_context: np.ndarray
) -> np.ndarray:
    """Seconds that context length adds to ``tokens`` tokens processed at a mean context of
    ``mean_context`` tokens (attention over the keys and values already there)."""
    return multiply_by(
        multiply_by(multiply_by(ms_per_token_per_1k * tokens, mean_context), _PER_1K), _MS
    )


def reprefill_s(scenario: Scenario, missing_history_tokens: float) -> float:
    """Extra prefill seconds of history the replica no longer holds (the share of it that
    would have been reused is prefilled again)."""
    i = scenario.inference
    return i.prefix_cache_hit_fraction * missing_history_tokens / i.prefill_tps


def later_first_token_s(prefill_s: float, parallel_s: float, extra_s: float) -> float:
    """How much later a turn's first token comes when prefill takes ``extra_s`` longer:
    the verdict of the classifiers that run alongside prefill waits for both."""
    return max(prefill_s + extra_s, parallel_s) - max(prefill_s, parallel_s)


class PostRates(Protocol):
    """The two post fields of ``Api``: numbers, or arrays over points (a column form)."""

    @property
    def post_fixed_ms(self) -> float | np.ndarray: ...

    @property
    def post_per_1k_tokens_ms(self) -> float | np.ndarray: ...


def post_cpu_s(api: PostRates, runs: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Post-inference work (billing, logging, persisting) of ``runs`` over ``tokens`` output."""
    # (runs * post_fixed_ms + post_per_1k_tokens_ms * tokens * _PER_1K) * _MS
    per_1k_ms = multiply_by(api.post_per_1k_tokens_ms * tokens, _PER_1K)
    return multiply_by(add_to(runs * api.post_fixed_ms, per_1k_ms), _MS)


def stage_costs(
    scenario: Scenario,
    work: Work,
    parallel_excess_s: np.ndarray | None = None,
    post_hidden_s: np.ndarray | None = None,
    compaction: Work | None = None,
) -> TurnCosts:
    """Durations (seconds) of every stage of every turn described by ``work``.

    ``scenario`` may also be a column form of many scenarios (numbers as arrays
    over points) and ``work`` arrays over points and turns.  ``parallel_excess_s``
    replaces ``max(0, parallel_margin_s)`` in the safety stage, and
    ``post_hidden_s`` replaces ``min(post work, tool)`` (the blocking post work a
    tool started on the call item hides), when the caller has their expectations
    over a distribution of work (the analytic engine).  ``compaction`` is the work
    of the compaction request sent before each turn where ``work.compactions``:
    the whole request's time is the turn's compaction stage.
    """
    c, n, a, s = scenario.client, scenario.network, scenario.api, scenario.safety
    rtt_s = n.rtt_ms * _MS
    half_rtt_s = rtt_s / 2
    zeros = np.zeros_like(work.tool_s)

    # (build_fixed_ms + build_per_item_ms * items_sent) * _MS
    client_build = multiply_by(add_to(c.build_per_item_ms * work.items_sent, c.build_fixed_ms), _MS)
    handshake_s = (n.tcp_handshake_rtts + n.tls_handshake_rtts) * rtt_s + n.tls_crypto_ms * _MS
    ws_extra_s = n.ws_upgrade_rtts * rtt_s + c.ws_handshake_ms * _MS
    connect = add_to(work.connect_http * handshake_s, work.connect_ws * (handshake_s + ws_extra_s))
    # rtt_s + (build_fixed_ms + build_per_item_ms * items_new) * _MS
    #       + (validate_fixed_ms + memory_state_ms) * _MS
    failed_attempt_s = multiply_by(
        add_to(c.build_per_item_ms * work.items_new, c.build_fixed_ms), _MS
    )
    failed_attempt_s = add_to(
        add_to(failed_attempt_s, rtt_s), (a.validate_fixed_ms + a.memory_state_ms) * _MS
    )
    recover = multiply_by(failed_attempt_s, work.recover)
    # half_rtt_s + (overhead_bytes + tokens_sent * bytes_per_token) / uplink
    #            + http_request * http_request_overhead_ms * _MS
    request_bytes = add_to(work.tokens_sent * n.bytes_per_token, n.request_overhead_bytes)
    upload = add_to(divide_by(request_bytes, n.uplink_bytes_per_s), half_rtt_s)
    upload = add_to(upload, multiply_by(work.http_request * c.http_request_overhead_ms, _MS))
    # (validate_runs * validate_fixed_ms + validate_per_item_ms * items_validated) * _MS
    validate = multiply_by(
        add_to(
            work.validate_runs * a.validate_fixed_ms,
            a.validate_per_item_ms * work.items_validated,
        ),
        _MS,
    )
    # (store_loads * store_fixed_ms + per_kb_ms * state_kb + memory_loads * memory_ms) * _MS
    state_kb = divide_by(work.store_state_tokens * a.state_bytes_per_token, 1024)
    state_load = add_to(
        work.store_loads * a.state_store_fixed_ms, multiply_by(state_kb, a.state_store_per_kb_ms)
    )
    state_load = multiply_by(add_to(state_load, work.memory_loads * a.memory_state_ms), _MS)
    # render_per_1k_tokens_ms * tokens_rendered * _PER_1K * _MS
    render = multiply_by(
        multiply_by(a.render_per_1k_tokens_ms * work.tokens_rendered, _PER_1K), _MS
    )
    # (route_full * route_ms + route_cached * route_cached_ms) * _MS
    route = multiply_by(
        add_to(work.route_full * a.route_ms, work.route_cached * a.route_cached_ms), _MS
    )
    # hop_runs * intermediate_hops * hop_ms * _MS
    hops = multiply_by(multiply_by(work.hop_runs * a.intermediate_hops, a.hop_ms), _MS)
    parallel, prefill = _parallel_and_prefill_s(scenario, work)
    # (safety_runs * blocking_fixed_ms + blocking_per_1k_tokens_ms * classified * _PER_1K) * _MS
    blocking = multiply_by(
        add_to(
            work.safety_runs * s.blocking_fixed_ms,
            multiply_by(s.blocking_per_1k_tokens_ms * work.tokens_classified, _PER_1K),
        ),
        _MS,
    )
    if parallel_excess_s is None:
        parallel_excess_s = positive_part(parallel - prefill)
    safety = blocking + parallel_excess_s
    # output_tokens * decode_s_per_token + context(output_tokens, prompt + output / 2)
    decode = add_to(
        work.output_tokens * work.decode_s_per_token,
        _context_s(
            scenario.inference.decode_ms_per_token_per_1k_context_tokens,
            work.output_tokens,
            add_to(work.output_tokens / 2, work.prompt_tokens),
        ),
    )
    post_cpu = post_cpu_s(a, work.post_runs, work.post_tokens)
    if post_hidden_s is None:
        post_hidden_s = np.minimum(post_cpu, work.tool_s)
    post = work.post_blocking * (post_cpu - work.tool_overlaps_post * post_hidden_s)
    # half_rtt_s + output_tokens * bytes_per_token / downlink_bytes_per_s
    download = add_to(
        divide_by(work.output_tokens * n.bytes_per_token, n.downlink_bytes_per_s), half_rtt_s
    )
    # A failed attempt costs its own build, upload and validation and the error's way
    # back; one answered after prefill also costs the rest of the work before the first token.
    failed_early_s = add_to(add_to(client_build + upload, validate), half_rtt_s)
    failed_late_s = failed_early_s + state_load
    for seconds in (render, route, hops, safety, prefill):
        failed_late_s = add_to(failed_late_s, seconds)
    retry = add_to(work.failed_early * failed_early_s, multiply_by(failed_late_s, work.failed_late))
    retry = add_to(retry, work.retry_wait_s)

    compact = zeros
    compaction_api_s = compaction_safety_s = compaction_post_s = zeros
    if compaction is not None:
        request = stage_costs(scenario, compaction)
        compact = work.compactions * request.request_s
        compaction_api_s = work.compactions * request.api_cpu_s
        compaction_safety_s = work.compactions * request.safety_cpu_s
        compaction_post_s = work.compactions * request.post_overlapped_s

    stage_s = {
        Stage.COMPACT: compact,
        Stage.RETRY: retry,
        Stage.CLIENT_BUILD: client_build,
        Stage.CONNECT: connect,
        Stage.RECOVER: recover,
        Stage.UPLOAD: upload,
        Stage.VALIDATE: validate,
        Stage.STATE_LOAD: state_load,
        Stage.RENDER: render,
        Stage.ROUTE: route,
        Stage.HOPS: hops,
        Stage.SAFETY: safety,
        Stage.QUEUE: zeros,
        Stage.PREFILL: prefill,
        Stage.DECODE: decode,
        Stage.POST: post,
        Stage.DOWNLOAD: download,
        Stage.TOOL: work.tool_s,
    }
    ttft: np.ndarray = np.zeros(())
    for stage in FIRST_TOKEN_STAGES:
        ttft = add_to(ttft, stage_s[stage])
    ttft = add_to(ttft, half_rtt_s)
    failed_api_s = multiply_by(work.recover * (a.validate_fixed_ms + a.memory_state_ms), _MS)
    api_cpu = validate + state_load
    for seconds in (render, route, post_cpu, failed_api_s, compaction_api_s):
        api_cpu = add_to(api_cpu, seconds)
    return TurnCosts(
        stage_s=stage_s,
        ttft_s=ttft,
        api_cpu_s=api_cpu,
        safety_cpu_s=add_to(blocking + parallel, compaction_safety_s),
        post_overlapped_s=add_to(post_cpu - post, compaction_post_s),
        safety_parallel_s=parallel,
    )
