"""A block of rollouts: its drawn turns, their service times, what a run records, its records.

Rollouts are simulated in blocks of ``BLOCK_ROLLOUTS`` that share one set of
random streams.  A block is drawn once, turned into per-phase service times
for both connection variants (cold and warm), filled in by the engine as its
rollouts run, and reduced to records once they are done.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, replace

import numpy as np

from models.costs import TurnCosts, stage_costs
from models.scenario import Scenario
from models.stages import POOLS, STAGE_COLUMN, STAGES, Stage
from models.work import Work
from sim.des.draws import draw_turns
from sim.des.streams import BLOCK_ROLLOUTS
from sim.turn.phases import FIRST_TOKEN_WAITS, WAIT_PHASES, WAIT_POOLS, Segments
from sim.turn.records import RolloutRecords, TurnRecords
from sim.turn.transports import Transport, cached_prompt_tokens, compaction_work, turn_work
from sim.turn.turns import Turns


class Block:
    """Drawn turns of one block and what the run records about them, per turn and rollout."""

    def __init__(
        self,
        scenario: Scenario,
        transport: Transport,
        index: int,
        rollouts: int,
        replication: int,
        contended: bool,
        turns: Turns | None = None,
    ) -> None:
        """``turns``: the block's turns as given (observed elsewhere) instead of drawn."""
        self.index = index
        self.turns = (
            turns if turns is not None else draw_turns(scenario, index, rollouts, replication)
        )
        works = turn_costs(scenario, transport, self.turns)
        (cold_work, cold_costs), (warm_work, warm_costs) = works
        resident = scenario.kv_cache.residency
        self.cold = Segments(cold_costs, cold_work, contended, resident)
        self.warm = Segments(warm_costs, warm_work, contended, resident)
        self.costs = None if contended or resident else works
        """The (cold, warm) work and costs, kept when one block runs at a time and they are
        final; a fleet recomputes them when reducing instead, which bounds the memory of
        many blocks in flight."""
        self.offsets: list[int] = self.turns.offsets.tolist()
        count = self.turns.count
        self.missing_history: list[float] = [0.0] * count if resident else []
        """History tokens each turn's replica no longer held (residency on; empty: the
        simple mode, where nothing is missing)."""
        self.history_after: list[float] = self.turns.history_after().tolist() if resident else []
        # Lists while the run writes them item by item (faster than numpy stores).
        self.cold_flag: list[float] = [0.0] * count
        self.start_at_s: list[float] = [np.nan] * count
        self.wait_s = np.zeros((count, len(WAIT_PHASES)))
        self.decode_s: array[float] | None = array("d", bytes(8 * count)) if contended else None
        """Decode seconds as stretched by the batch (fleet only; None: as drawn)."""
        self.output_tokens: array[float] = (
            array("d", np.asarray(self.turns.output_tokens, dtype=float).tobytes())
            if contended
            else array("d")
        )
        """Each turn's output tokens, read one by one as a fleet's turns complete."""
        limited = contended and scenario.rate_limit.limits
        self.throttle_s: list[float] = [0.0] * count if limited else []
        """Seconds each turn spent refused by the rate limit (429s, their retry-afters)."""
        self.refused: list[int] = [0] * count if limited else []
        self.limit_tokens: list[float] = []
        """What each request counts against a token limit: its whole prompt and output."""
        if limited and scenario.rate_limit.tokens_per_minute > 0:
            t = self.turns
            self.limit_tokens = (t.fixed_tokens + t.context_tokens + t.output_tokens).tolist()
        self.started_at_s = np.full(rollouts, np.nan)
        self.ended_at_s = np.full(rollouts, np.nan)
        self.finished = 0

    @property
    def rollouts(self) -> int:
        return self.turns.rollouts


def reduce_block(
    scenario: Scenario,
    transport: Transport,
    block: Block,
    keep: np.ndarray,
    turn_rows: np.ndarray | None = None,
) -> RolloutRecords:
    """Per-rollout records of the rollouts where ``keep``; per-turn rows for ``turn_rows``.

    The recorded cold flags select each turn's variant; the queue stage is the
    turn's waits, decode is as stretched by the batch, TTFT adds the waits
    before the first token.
    """
    cold_flag = np.asarray(block.cold_flag, dtype=float)
    turns = block.turns
    if block.missing_history:
        turns = replace(turns, missing_history_tokens=np.asarray(block.missing_history))
    costs, uncached = _selected_costs(scenario, transport, block, turns, cold_flag)
    matrix = np.column_stack([costs.stage_s[stage] for stage in STAGES])
    matrix[:, STAGE_COLUMN[Stage.QUEUE]] = block.wait_s.sum(axis=1)
    if block.decode_s is not None:
        matrix[:, STAGE_COLUMN[Stage.DECODE]] = np.frombuffer(block.decode_s)
    ttft_s = costs.ttft_s + block.wait_s[:, FIRST_TOKEN_WAITS].sum(axis=1)
    refused = throttle_s = None
    if block.refused:
        refused, throttle_s = np.asarray(block.refused, dtype=float), np.asarray(block.throttle_s)
        matrix[:, STAGE_COLUMN[Stage.RETRY]] += throttle_s
        ttft_s = ttft_s + throttle_s
    ran = RanTurns(
        turns=turns,
        block_index=block.index,
        stage_s=matrix,
        ttft_s=ttft_s,
        costs=costs,
        cached_prompt_tokens=cached_prompt_tokens(scenario, turns),
        uncached_prompt_tokens=uncached,
        cold_flag=cold_flag,
        start_at_s=np.asarray(block.start_at_s),
        started_at_s=block.started_at_s,
        ended_at_s=block.ended_at_s,
        wait_s=block.wait_s,
        refused=refused,
        throttle_s=throttle_s,
    )
    return sum_rollouts(ran, keep, turn_rows)


@dataclass(frozen=True)
class RanTurns:
    """A block's turns as they ran: each turn's seconds in the variant it ran and what the
    run recorded (``wait_s``, ``refused``, ``throttle_s`` None: nothing waited or refused)."""

    turns: Turns
    block_index: int
    stage_s: np.ndarray | None
    """Shape (turns, len(STAGES)), the queue and retry stages included (None: no turn's
    row is kept, and ``stage_sums_s`` holds what the records need)."""
    ttft_s: np.ndarray
    costs: TurnCosts
    """The selected costs (their CPU and side-holding seconds are read)."""
    cached_prompt_tokens: np.ndarray
    uncached_prompt_tokens: np.ndarray
    cold_flag: np.ndarray
    start_at_s: np.ndarray
    started_at_s: np.ndarray
    ended_at_s: np.ndarray
    wait_s: np.ndarray | None = None
    refused: np.ndarray | None = None
    throttle_s: np.ndarray | None = None
    stage_sums_s: np.ndarray | None = None
    """``stage_s`` summed per rollout, where the run summed it as it went."""


def sum_rollouts(
    ran: RanTurns, keep: np.ndarray, turn_rows: np.ndarray | None = None
) -> RolloutRecords:
    """Sum a block's turns into one row per rollout where ``keep`` (and per-turn rows for
    ``turn_rows``)."""
    turns, costs, count = ran.turns, ran.costs, ran.turns.count
    rollouts = len(turns.offsets) - 1
    starts = turns.offsets[:-1]
    per_rollout = np.diff(turns.offsets)
    kept_turns = np.repeat(keep, per_rollout)
    turn_records = None
    if turn_rows is not None:
        rows = np.repeat(turn_rows, per_rollout)
        wait_s = ran.wait_s if ran.wait_s is not None else np.zeros((count, len(WAIT_PHASES)))
        refused = ran.refused if ran.refused is not None else np.zeros(count)
        turn_records = TurnRecords(
            rollout=np.repeat(np.arange(rollouts) + ran.block_index * BLOCK_ROLLOUTS, per_rollout)[
                rows
            ],
            turn_index=turns.turn_index[rows],
            start_at_s=ran.start_at_s[rows],
            cold=ran.cold_flag[rows],
            stage_s=_per_turn(ran.stage_s)[rows],
            ttft_s=ran.ttft_s[rows],
            api_cpu_s=costs.api_cpu_s[rows],
            post_overlapped_s=costs.post_overlapped_s[rows],
            safety_parallel_s=costs.safety_parallel_s[rows],
            wait_s=wait_s[rows],
            cached_prompt_tokens=ran.cached_prompt_tokens[rows],
            uncached_prompt_tokens=ran.uncached_prompt_tokens[rows],
            rate_limited=refused[rows],
            output_tokens=turns.output_tokens[rows],
            tool_kind=_tool_kinds(turns)[rows],
        )
    if ran.wait_s is None:
        pool_wait_s = np.zeros((rollouts, len(POOLS)))
    else:
        pool_wait_s = np.add.reduceat(ran.wait_s @ _POOL_OF_WAIT, starts, axis=0)
    return RolloutRecords(
        e2e_s=(ran.ended_at_s - ran.started_at_s)[keep],
        turns=per_rollout.astype(float)[keep],
        cold_turns=np.add.reduceat(ran.cold_flag, starts)[keep],
        stage_s=(
            ran.stage_sums_s
            if ran.stage_sums_s is not None
            else np.add.reduceat(_per_turn(ran.stage_s), starts, axis=0)
        )[keep],
        ttft_sum_s=np.add.reduceat(ran.ttft_s, starts)[keep],
        api_cpu_s=np.add.reduceat(costs.api_cpu_s, starts)[keep],
        safety_cpu_s=np.add.reduceat(costs.safety_cpu_s, starts)[keep],
        started_at_s=ran.started_at_s[keep],
        pool_wait_s=pool_wait_s[keep],
        turn_ttft_s=ran.ttft_s[kept_turns],
        cached_prompt_tokens=np.add.reduceat(ran.cached_prompt_tokens, starts)[keep],
        uncached_prompt_tokens=np.add.reduceat(ran.uncached_prompt_tokens, starts)[keep],
        rate_limited=_rollout_sums(ran.refused, starts)[keep],
        rate_limit_wait_s=_rollout_sums(ran.throttle_s, starts)[keep],
        turn_records=turn_records,
    )


def _rollout_sums(per_turn: np.ndarray | None, starts: np.ndarray) -> np.ndarray:
    """Each rollout's sum of ``per_turn`` (None: nothing recorded, zero)."""
    return np.zeros(len(starts)) if per_turn is None else np.add.reduceat(per_turn, starts)


def _per_turn(stage_s: np.ndarray | None) -> np.ndarray:
    if stage_s is None:
        raise ValueError("the run kept no per-turn stage seconds")
    return stage_s


_POOL_OF_WAIT = np.array([[float(p is pool) for pool in POOLS] for p in WAIT_POOLS])
"""Wait columns to pools: (len(WAIT_PHASES), len(POOLS)) indicator matrix."""


def _selected_costs(
    scenario: Scenario, transport: Transport, block: Block, turns: Turns, cold_flag: np.ndarray
) -> tuple[TurnCosts, np.ndarray]:
    """Each turn's costs in the variant it ran, and its prompt tokens prefilled."""
    if block.costs is not None:
        (cold_work, cold), (warm_work, warm) = block.costs
    else:
        (cold_work, cold), (warm_work, warm) = turn_costs(scenario, transport, turns)
    uncached = np.where(
        cold_flag == 1, cold_work.prompt_tokens_uncached, warm_work.prompt_tokens_uncached
    )
    return cold.select(warm, cold_flag), uncached


def turn_costs(
    scenario: Scenario, transport: Transport, turns: Turns
) -> tuple[tuple[Work, TurnCosts], tuple[Work, TurnCosts]]:
    """The (cold, warm) work and costs of drawn turns, compaction requests included."""
    cold, warm = turn_work(scenario, transport, turns)
    cold_compaction: Work | None = None
    warm_compaction: Work | None = None
    if scenario.compaction.compacts:
        cold_compaction, warm_compaction = compaction_work(scenario, transport, turns)
    return (
        (cold, stage_costs(scenario, cold, compaction=cold_compaction)),
        (warm, stage_costs(scenario, warm, compaction=warm_compaction)),
    )


def _tool_kinds(turns: Turns) -> np.ndarray:
    """Each turn's tool kind (-1 where the turns carry none)."""
    if turns.tool_kind is None:
        return np.full(turns.count, -1)
    return turns.tool_kind
