"""Bad traces: lines counted by reason and the rest read, a file with nothing usable refused
in one line (exit code 2 from the command line), a million lines read streaming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_lines import FIXTURE, codex_line, otlp_span

from sim.traces.read import read_rollouts
from sim.traces.report import ReadReport, TraceError


def test_bad_lines_are_counted_by_reason_and_the_rest_is_read(tmp_path: Path) -> None:
    good = FIXTURE.read_text().splitlines()
    broken = list(good)
    broken.insert(5, good[5][: len(good[5]) // 2])  # a truncated line
    broken.insert(9, "[1, 2, 3]")
    wrong = json.loads(good[9])
    wrong["timestamp"] = 12
    broken.insert(12, json.dumps(wrong))
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(broken) + "\n")
    report = ReadReport(str(path))
    requests = [r for rollout in read_rollouts(path, report) for r in rollout]
    assert len(requests) == 7
    assert report.malformed["not JSON (truncated?)"].count == 1
    assert report.malformed["not JSON (truncated?)"].first_line == 6
    assert report.malformed["not a JSON object"].count == 1
    assert "timestamp = 12: expected an ISO 8601 time" in report.malformed["wrong type"].example
    assert any("first at line 6" in line for line in report.lines_of_text())


def test_negative_durations_and_requests_without_an_end_are_dropped_and_counted(
    tmp_path: Path,
) -> None:
    t0 = 1_770_000_000_000_000_000
    ok = {"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": 5}
    spans = [
        otlp_span("chat a", ok, t0, t0 + 10**9),
        otlp_span("chat b", ok, t0 + 3 * 10**9, t0 + 2 * 10**9),
        otlp_span("chat c", ok, t0 + 4 * 10**9, 0),
    ]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    report = ReadReport(str(path))
    requests = [r for rollout in read_rollouts(path, report) for r in rollout]
    assert len(requests) == 1
    assert report.warnings["negative duration (request dropped)"].count == 1
    assert report.warnings["request without an end"].count == 1


def test_a_file_with_nothing_usable_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(codex_line("session_meta", {"id": "s"}, "2026-01-01T00:00:00Z") + "\n")
    with pytest.raises(TraceError, match="nothing usable: no request with token usage"):
        list(read_rollouts(path))
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    with pytest.raises(TraceError, match="no known trace format"):
        list(read_rollouts(other))


def test_the_cli_reports_an_unusable_trace_with_exit_code_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    other = tmp_path / "other.jsonl"
    other.write_text("not json at all\n")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sim.cli.app import main; main()",
            "trace",
            "summarize",
            str(other),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "no known trace format" in result.stderr


@pytest.mark.slow
def test_a_million_lines_stream_with_bad_ones_counted(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    template = FIXTURE.read_text().splitlines()
    with path.open("w") as file:
        copies = 0
        written = 0
        while written < 1_000_000:
            for line in template:
                record = json.loads(line)
                if record["type"] == "session_meta":
                    record["payload"]["id"] = f"s{copies}"
                file.write(json.dumps(record) + "\n")
            file.write('{"truncated": \n')
            written += len(template) + 1
            copies += 1
    report = ReadReport(str(path))
    rollouts = sum(1 for _ in read_rollouts(path, report))
    assert report.lines == written
    assert rollouts == 2 * copies
    assert report.requests == 7 * copies
    assert report.malformed["not JSON (truncated?)"].count == copies
