"""Memory of reading a large trace: a Codex rollout JSONL of ``--bytes`` (default 1 GB).

``python -m benchmarks.trace_read [--bytes N]`` writes the file (the shared Codex fixture
repeated, each copy its own session) in a temporary directory, removed at the end (or at
``--file``, kept), then in fresh subprocesses reads it three times: with a bare line loop
that parses every line as JSON (the baseline), with the trace reader counting rollouts
without keeping them, and as ``loopbudget trace summarize`` does (every request read,
then summarised).  It prints one JSON object: each run's peak resident set (VmHWM, MB),
seconds, and the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURE = (
    Path(__file__).resolve().parents[1] / "tests" / "data" / "traces" / "codex-0.66-session.jsonl"
)


def write(path: Path, size_bytes: int) -> None:
    template = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    with path.open("w") as file:
        copy = 0
        while file.tell() < size_bytes:
            for record in template:
                if record["type"] == "session_meta":
                    record["payload"]["id"] = f"session-{copy}"
                file.write(json.dumps(record) + "\n")
            copy += 1


def measure(path: Path, how: str) -> dict:
    started = time.perf_counter()
    if how == "baseline":
        with path.open("rb") as file:
            count = sum(1 for line in file if json.loads(line))
    elif how == "reader":
        from sim.traces.read import read_rollouts

        count = sum(1 for _ in read_rollouts(path))
    else:
        from sim.cli.traces import read_traces
        from sim.traces.summary import summarize

        requests, reports = read_traces([path])
        count = summarize(requests, reports)["rollouts"]
    seconds = time.perf_counter() - started
    status = Path("/proc/self/status").read_text()
    peak_kb = int(next(row for row in status.splitlines() if row.startswith("VmHWM")).split()[1])
    return {"how": how, "count": count, "seconds": seconds, "peak_rss_mb": peak_kb / 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=float, default=1e9)
    parser.add_argument("--file", type=Path, default=None, help="keep the trace here")
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.file, args.child)))
        return
    if args.file is not None:
        if not args.file.exists() or args.file.stat().st_size < args.bytes:
            write(args.file, int(args.bytes))
        run(args.file)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.jsonl"
        write(path, int(args.bytes))
        run(path)


def run(path: Path) -> None:
    runs = {}
    for how in ("baseline", "reader", "summarize"):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.trace_read",
                "--file",
                str(path),
                "--child",
                how,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        runs[how] = json.loads(out)
    base = runs["baseline"]
    ratios = {
        f"{how}_ratios": {
            "rss": runs[how]["peak_rss_mb"] / base["peak_rss_mb"],
            "time": runs[how]["seconds"] / base["seconds"],
        }
        for how in ("reader", "summarize")
    }
    print(json.dumps({"file_bytes": path.stat().st_size, **runs, **ratios}, indent=2))


if __name__ == "__main__":
    main()
