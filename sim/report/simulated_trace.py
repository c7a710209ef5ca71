"""A simulated run's turns as trace requests, so ``--otel`` writes them like a real agent's.

Each turn is one request: it starts when the turn starts (the client builds the
request inside it, as an SDK instrumentation's span does), its first output is
the turn's TTFT later, and it ends when every stage but the tool is done; its
tool call (the turn's first, for parallel calls: one span for the turn's whole
tool step) runs from then for the tool's seconds.  Simulated seconds are laid
on ``SIMULATED_EPOCH_S`` so tools that expect wall-clock times show them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from models.scenario import Scenario
from models.stages import STAGE_COLUMN, Stage
from sim.analysis.run import Run
from sim.traces.table import Request, ToolCall
from sim.turn.records import TurnRecords

SIMULATED_EPOCH_S = 1_767_225_600.0
"""2026-01-01T00:00:00Z: where simulated time 0 is put in the trace."""
SERVER_ADDRESS = "simulated.loopbudget"


def run_requests(run: Run, label: str) -> Iterator[list[Request]]:
    """The rollouts of a run that kept its turns, each its requests in order."""
    yield from turn_requests(run.turn_records(), run.scenario, run.spec.transport.value, label)


def turn_requests(
    turns: TurnRecords, scenario: Scenario, transport: str, label: str
) -> Iterator[list[Request]]:
    """Requests of per-turn records; rollout ids are ``{label}/{rollout}``."""
    tool_column = STAGE_COLUMN[Stage.TOOL]
    request_s = turns.stage_s.sum(axis=1) - turns.stage_s[:, tool_column]
    names = [tool.name for tool in scenario.workload.tools]
    order = np.lexsort((turns.turn_index, turns.rollout))
    bounds = np.flatnonzero(np.diff(turns.rollout[order])) + 1
    for rows in np.split(order, bounds):
        if rows.size == 0:
            continue
        rollout_id = f"{label}/{int(turns.rollout[rows[0]])}"
        connection = 0
        requests = []
        for row in rows:
            start_s = SIMULATED_EPOCH_S + float(turns.start_at_s[row])
            end_s = start_s + float(request_s[row])
            cold = bool(turns.cold[row])
            connection += int(cold)
            cached = float(turns.cached_prompt_tokens[row])
            prompt = cached + float(turns.uncached_prompt_tokens[row])
            index = int(turns.turn_index[row])
            calls: tuple[ToolCall, ...] = ()
            kind = int(turns.tool_kind[row])
            if kind >= 0:
                tool_s = float(turns.stage_s[row, tool_column])
                call_id = f"call_{rollout_id}_{index}"
                calls = (ToolCall(call_id, names[kind], end_s, end_s + tool_s),)
            requests.append(
                Request(
                    rollout_id=rollout_id,
                    request_index=index,
                    start_s=start_s,
                    end_s=end_s,
                    format="loopbudget-otlp",
                    transport=transport,
                    first_output_s=start_s + float(turns.ttft_s[row]),
                    input_tokens=round(prompt),
                    cached_input_tokens=round(cached),
                    output_tokens=round(float(turns.output_tokens[row])),
                    model=scenario.inference.hardware,
                    server_address=SERVER_ADDRESS,
                    response_id=f"resp_{rollout_id}_{index}",
                    previous_response_id=f"resp_{rollout_id}_{index - 1}" if index else None,
                    connection_id=f"{rollout_id}/connection/{connection}",
                    connection_reused=not cold,
                    tool_calls=calls,
                )
            )
        yield requests
