"""Sentences and tables written from data follow rules a reader can rely on: an interval
never contradicts the verdict beside it, a ``--set`` value is never broken across lines,
notes are no wider than their table, and a small throughput is not rounded to 0."""

from __future__ import annotations

import re

import pytest
from support import CliResult

from sim.capacity.objectives import CapacityResult
from sim.cli.capacity import statement
from sim.turn.transports import Transport


def capacity(failing: int | None, high: int | None) -> CapacityResult:
    return CapacityResult(
        transport=Transport.HTTP,
        capacity_agents=172,
        first_failing_agents=failing,
        ci95_agents=(164, high),
        evaluations=(),
        analytic_estimate_agents=170,
        saturation_agents=190.0,
    )


def test_an_interval_past_the_failing_load_says_why() -> None:
    text = statement(capacity(failing=180, high=188))
    assert "172 meet every SLO, 180 do not" in text
    assert "between 164 and 188 agents (180 misses by its mean, but not at 95%)" in text


def test_an_interval_below_the_failing_load_needs_no_word() -> None:
    text = statement(capacity(failing=180, high=179))
    assert "between 164 and 179 agents;" not in text
    assert "between 164 and 179 agents." in text
    assert "misses by its mean" not in text


LONG_SETS = (
    "network.rtt_ms=120",
    "workload.tools[3].weight=0.3",
    'inference.decode_tps={kind="constant",value=4000}',
    'workload.tools[0].time_s={kind="lognormal",median=1.5,sigma=0.4}',
)


@pytest.mark.parametrize("command", ["run", "compare"])
def test_titles_keep_every_set_value_whole(cli, command: str) -> None:
    specs = ["codex-spark:ws"] if command == "run" else ["codex-spark:http", "codex-spark:ws"]
    args = [command, *specs, "--engine", "analytic"]
    for override in LONG_SETS:
        args += ["--set", override]
    result: CliResult = cli(*args)
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    for override in LONG_SETS:
        whole = [line for line in lines if line.strip() == f"--set {override}"]
        assert len(whole) == (1 if command == "run" else 2), (override, result.stdout)


def test_load_notes_are_no_wider_than_the_table_and_one_agent_turns_are_not_zero(cli) -> None:
    result = cli("load", "codex-spark:http", "--agents", "1,100", "--engine", "analytic")
    assert result.exit_code == 0, result
    lines = result.stdout.splitlines()
    rule = next(line for line in lines if set(line.strip()) == {"─"})
    end = lines.index(rule) + 3
    table_width = max(len(line.rstrip()) for line in lines[:end])
    notes = lines[end:]
    assert notes and max(len(line.rstrip()) for line in notes) <= table_width
    one_agent = next(line for line in lines if re.match(r"\s+1\s", line))
    turns_per_s = one_agent.split()[5]
    assert float(turns_per_s) > 0 and turns_per_s != "0"
