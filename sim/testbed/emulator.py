"""The emulated API service: one request walks the stage table's phases under real pools.

Stage delays come from ``models.costs.stage_costs`` on what the intake counted;
the request takes each phase's pool (an asyncio semaphore sized like the
scenario's), waits out the phase on chained deadlines and lets the pool go,
exactly the path the fleet simulation walks (``sim.turn.phases``).  The first
output event leaves when prefill ends, output streams at the drawn decode rate
(slowed by the batch on its replica), and post-inference work either delays
``response.completed`` (HTTP) or runs after it, holding an API worker (WebSocket).
The parallel classifiers hold a safety worker from the start of prefill, and the
first output waits for their verdict (the side table of ``models.stages``).

With a real backend (``sim.testbed.engine``), validation and rendering are that
backend's real work and prefill and decode run on its model: those stages take
what they took, and the rest keep their emulated delays.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from models.costs import stage_costs
from models.scenario import Scenario
from models.stages import Pool, Side, Stage
from sim.testbed.clock import TimerLead
from sim.testbed.intake import Intake, Prepared
from sim.testbed.limits import Limits
from sim.testbed.log import RequestLog
from sim.testbed.pools import PoolBank
from sim.testbed.protocol import ApiError, Event
from sim.testbed.script import Script
from sim.testbed.server_phases import SERVER_PHASES, held_stage_s
from sim.testbed.state import ConnectionCache, ResponseState, ResponseStore
from sim.testbed.stream import DELTA_INTERVAL_S, MAX_DELTAS, OutputStream
from sim.testbed.work import failed_lookup_work, prefix_reuse, request_work
from sim.turn.phases import BATCHED, Phase, holds_inner

Emit = Callable[[Event], Awaitable[None]]


class Emulator:
    """The service: intake, pools, store, scripted model and the per-request log."""

    def __init__(
        self,
        scenario: Scenario,
        lead: TimerLead,
        backend: Any = None,
        limits: Limits | None = None,
    ) -> None:
        self.scenario, self.lead, self.backend = scenario, lead, backend
        self.limits = limits or Limits()
        self.pools = PoolBank(scenario)
        self.store = ResponseStore(
            scenario.network.bytes_per_token,
            self.limits.store_ttl_s,
            self.limits.store_budget_bytes,
        )
        self.intake = Intake(scenario, self.store, Script(scenario))
        self.log = RequestLog()
        self.background: set[asyncio.Task[Any]] = set()
        self.in_flight = 0

    def prepare(self, body: dict[str, Any], http: bool, cache: ConnectionCache | None) -> Prepared:
        return self.intake.prepare(body, http, cache)

    async def refuse(self, error: ApiError, arrived_s: float, transport: str) -> None:
        """Wait out a refused request's cost (validated, looked up, refused) and log it."""
        costs = stage_costs(self.scenario, failed_lookup_work())
        seconds = float(costs.stage_s[Stage.VALIDATE][0] + costs.stage_s[Stage.STATE_LOAD][0])
        await self.lead.sleep_until(arrived_s + seconds)
        self.log.refused(transport, error.code, arrived_s, time.monotonic())

    async def run(
        self,
        p: Prepared,
        emit: Emit,
        arrived_s: float,
        transport: str,
        cache: ConnectionCache | None = None,
        connection: int | None = None,
    ) -> ResponseState:
        """Serve one prepared request, sending its events through ``emit``."""
        self.in_flight += 1
        try:
            return await self._run(p, emit, arrived_s, transport, cache, connection)
        finally:
            self.in_flight -= 1

    async def _run(
        self,
        p: Prepared,
        emit: Emit,
        arrived_s: float,
        transport: str,
        cache: ConnectionCache | None,
        connection: int | None,
    ) -> ResponseState:
        work = request_work(self.scenario, p.processed)
        costs = stage_costs(self.scenario, work)
        stage_s = {stage: float(seconds[0]) for stage, seconds in costs.stage_s.items()}
        held_s_of = held_stage_s(costs, stage_s)
        parallel_s = float(costs.side_s(Side.PARALLEL_SAFETY)[0])
        reuse = prefix_reuse(self.scenario, p.processed)
        output = OutputStream(p, self.scenario.network.bytes_per_token, emit, reuse)
        await output.begin()
        deadline_s, first_output_s = arrived_s, math.nan
        waits_s: dict[str, float] = {}
        held_s: dict[str, float] = {}
        real = None
        if self.backend is not None and self.backend.serves(p):
            real = (p, self.backend.api_work(p))
            stage_s[Stage.VALIDATE], stage_s[Stage.RENDER] = real[1].validate_s, real[1].render_s
            held_s_of[Stage.VALIDATE] = held_s_of[Stage.RENDER] = 0.0
            deadline_s = time.monotonic()
        phases = SERVER_PHASES if p.generate else SERVER_PHASES[:1]
        for phase in phases:
            seconds = sum(held_s_of[stage] for stage in phase.stages if stage not in BATCHED)
            if phase.pool is None:
                deadline_s += seconds
                await self.lead.sleep_until(deadline_s)
            elif phase.pool is Pool.INFERENCE and real is not None:
                deadline_s, first_output_s, stage_s[Stage.DECODE] = await self._infer_real(
                    real, parallel_s, stage_s, output, waits_s, held_s
                )
            elif phase.pool is Pool.INFERENCE:
                deadline_s, first_output_s, stage_s[Stage.DECODE] = await self._infer(
                    deadline_s, seconds, parallel_s, stage_s[Stage.DECODE], output, waits_s, held_s
                )
            elif seconds > 0:
                deadline_s = await self._serve(phase, deadline_s, held_s_of, work, waits_s, held_s)
            if Stage.POST in phase.stages and costs.post_overlapped_s[0] > 0:
                self._overlap(float(costs.post_overlapped_s[0]))
        state = output.state()
        self.store.put(state)
        if cache is not None:
            cache.put(state)
        await output.complete()
        self.log.completed(
            p,
            transport,
            connection,
            arrived_s,
            first_output_s,
            time.monotonic(),
            stage_s,
            waits_s,
            held_s,
        )
        return state

    async def _serve(
        self,
        phase: Phase,
        deadline_s: float,
        stage_s: dict[Stage, float],
        work: Any,
        waits_s: dict[str, float],
        held_s: dict[str, float],
    ) -> float:
        """Hold the phase's pool (and a nested one where the work uses it) for its stages."""
        if phase.pool is None:
            raise ValueError(f"phase {phase.stages} holds no pool")
        pool = self.pools[phase.pool]
        queued = pool.would_wait
        async with pool.hold(held_s) as waited_s:
            waits_s[phase.pool.value] = waits_s.get(phase.pool.value, 0.0) + waited_s
            if queued:
                deadline_s = max(deadline_s, time.monotonic())
            inner = phase.inner_stages
            if phase.inner is not None and inner and bool(holds_inner(phase.inner, work)[0]):
                first = phase.stages.index(inner[0])
                last = phase.stages.index(inner[-1]) + 1
                deadline_s += sum(stage_s[s] for s in phase.stages[:first])
                await self.lead.sleep_until(deadline_s)
                deadline_s = await self._hold(
                    phase.inner, deadline_s, inner, stage_s, waits_s, held_s
                )
                deadline_s += sum(stage_s[s] for s in phase.stages[last:])
            else:
                deadline_s += sum(stage_s[s] for s in phase.stages)
            await self.lead.sleep_until(deadline_s)
        return deadline_s

    async def _hold(
        self,
        pool_name: Pool,
        deadline_s: float,
        stages: tuple[Stage, ...],
        stage_s: dict[Stage, float],
        waits_s: dict[str, float],
        held_s: dict[str, float],
    ) -> float:
        pool = self.pools[pool_name]
        queued = pool.would_wait
        async with pool.hold(held_s) as waited_s:
            waits_s[pool_name.value] = waits_s.get(pool_name.value, 0.0) + waited_s
            if queued:
                deadline_s = max(deadline_s, time.monotonic())
            deadline_s += sum(stage_s[s] for s in stages)
            await self.lead.sleep_until(deadline_s)
        return deadline_s

    async def _infer(
        self,
        deadline_s: float,
        prefill_s: float,
        parallel_s: float,
        decode_s: float,
        output: OutputStream,
        waits_s: dict[str, float],
        held_s: dict[str, float],
    ) -> tuple[float, float, float]:
        """Prefill beside the parallel classifiers, the first output event once both are
        done, then the output streamed at the decode rate.

        Returns the deadline reached, when the first output left and the decode time
        as stretched by the batch on the replica.
        """
        pool = self.pools[Pool.INFERENCE]
        queued = pool.would_wait
        async with pool.hold(held_s) as waited_s:
            waits_s[Pool.INFERENCE.value] = waits_s.get(Pool.INFERENCE.value, 0.0) + waited_s
            if queued:
                deadline_s = max(deadline_s, time.monotonic())
            replica, slowdown = self.pools.replicas.join()
            verdict = self._classify(parallel_s, held_s) if parallel_s > 0 else None
            try:
                deadline_s += prefill_s
                await self.lead.sleep_until(deadline_s)
                if verdict is not None:
                    deadline_s = max(deadline_s, await verdict)
                first_output_s = time.monotonic()
                await output.start_output()
                stretched_s = decode_s * slowdown
                ticks = max(1, min(MAX_DELTAS, math.ceil(stretched_s / DELTA_INTERVAL_S)))
                for tick in range(1, ticks + 1):
                    await self.lead.sleep_until(deadline_s + stretched_s * tick / ticks)
                    await output.advance(tick / ticks)
                deadline_s += stretched_s
            finally:
                self.pools.replicas.leave(replica)
        await output.finish_output()
        return deadline_s, first_output_s, stretched_s

    async def _infer_real(
        self,
        real: tuple[Prepared, Any],
        parallel_s: float,
        stage_s: dict[Stage, float],
        output: OutputStream,
        waits_s: dict[str, float],
        held_s: dict[str, float],
    ) -> tuple[float, float, float]:
        """``_infer`` on the real backend: its prefill and decode take what they take (the
        measured prefill replaces the emulated one in ``stage_s``)."""
        pool = self.pools[Pool.INFERENCE]
        async with pool.hold(held_s) as waited_s:
            waits_s[Pool.INFERENCE.value] = waits_s.get(Pool.INFERENCE.value, 0.0) + waited_s
            verdict = self._classify(parallel_s, held_s) if parallel_s > 0 else None

            async def join() -> None:
                if verdict is not None:
                    await verdict

            inferred = await self.backend.infer(*real, output, join)
        stage_s[Stage.PREFILL] = inferred.prefilled.seconds
        await output.finish_output()
        return time.monotonic(), inferred.first_output_at_s, inferred.decode_s

    def _classify(self, seconds: float, held_s: dict[str, float]) -> asyncio.Task[float]:
        """The parallel classifiers: a safety worker for ``seconds`` from when one is free;
        the task's result is the deadline at which their verdict is in."""

        async def classify() -> float:
            async with self.pools[Pool.SAFETY].hold(held_s):
                done_s = time.monotonic() + seconds
                await self.lead.sleep_until(done_s)
            return done_s

        task = asyncio.create_task(classify())
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def _overlap(self, seconds: float) -> None:
        """Post-inference work after the response (WebSocket): it holds an API worker."""

        async def post() -> None:
            async with self.pools[Pool.API].hold():
                await self.lead.sleep(seconds)

        task = asyncio.create_task(post())
        self.background.add(task)
        task.add_done_callback(self.background.discard)
