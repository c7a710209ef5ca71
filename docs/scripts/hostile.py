"""docs/errors.md, section 7: the testbed's per-client limits and the further fixed limits (from
the code that applies them), and the soak's measurements (``benchmarks/results-soak.json``,
written by ``python -m benchmarks.soak``; quoted, not re-measured).

    .venv/bin/python -m docs.scripts.hostile
"""

from __future__ import annotations

import json
from pathlib import Path

from docs.scripts.markdown import Quote, show, table
from models.numbers import MAX_NUMBER_DIGITS
from sim.analysis.load_points import MAX_LOAD_POINTS
from sim.analysis.workers_need import WORKER_PROCESS_BYTES
from sim.api.arguments import MIN_ROLLOUTS
from sim.cli.app import MAX_LINE_CHARS
from sim.cli.endpoints import CONNECT_TIMEOUT_S
from sim.dashboard.sweeps import MAX_PATH_CHARS as EXPLORER_PATH_CHARS
from sim.sweep.read_estimate import READ_COPIES
from sim.testbed.connection_limit import REFUSED_GRACE_S
from sim.testbed.limits import MB, Limits
from sim.testbed.log import KEPT_RECORDS
from sim.testbed.pools import KEPT_CHANGES
from sim.testbed.request_check import MAX_JSON_DEPTH, METADATA_PAIRS
from sim.testbed.run_estimate import AGENT_BYTES
from sim.testbed.server import GRACEFUL_SHUTDOWN_S
from sim.testbed.ws_connection import OUTBOX_EVENTS

ROOT = Path(__file__).resolve().parents[2]
PAGE = "docs/errors.md"
SOAK = ROOT / "benchmarks" / "results-soak.json"


def testbed_limits() -> str:
    """What one client can make the emulator hold, and what it is told beyond."""
    limits = Limits()
    rows = [
        [
            "HTTP request body",
            f"{limits.max_body_bytes / MB:g} MB",
            "413 `request_too_large`, the rest unread",
        ],
        [
            "open connections of one client",
            f"{limits.max_connections_per_client:,} (and the open-file limit)",
            f"429 `too_many_connections` on its first request, closed after "
            f"{REFUSED_GRACE_S:g} s if it sends none",
        ],
        [
            "stored responses",
            f"{limits.store_ttl_s:,.0f} s, {limits.store_budget_bytes / MB:g} MB of context",
            "the oldest forgotten: `previous_response_not_found`",
        ],
        [
            "a WebSocket's creates waiting or running",
            f"{limits.ws_queue_length}",
            "429 `rate_limit_exceeded` error event, the lane goes on",
        ],
        [
            "events a WebSocket client leaves unread",
            f"{OUTBOX_EVENTS:,}",
            "the connection closes (1008): the client is not reading",
        ],
        [
            "nesting of a request's JSON",
            f"{MAX_JSON_DEPTH} levels",
            "400 `invalid_json`; no `NaN` or `Infinity` either",
        ],
        ["metadata", f"{METADATA_PAIRS} pairs of strings", "400 naming `metadata`"],
        ["the request log", f"{KEPT_RECORDS:,} records", "the oldest dropped"],
        ["a pool's busy history", f"{KEPT_CHANGES:,} changes", "the older half dropped"],
        [
            "stopping (one Ctrl-C)",
            f"{GRACEFUL_SHUTDOWN_S} s for requests in flight",
            "then they are cancelled",
        ],
    ]
    return table(["limit", "default", "beyond it"], rows)


def fixed_limits() -> str:
    """Further limits of the second round, each where the code applies it."""
    rows = [
        ["digits of one number", f"{MAX_NUMBER_DIGITS}", "every file, option, request, upload"],
        ["load points of one curve", f"{MAX_LOAD_POINTS:,}", "`load`, the dashboard, the API"],
        [
            "a local worker process",
            f"{WORKER_PROCESS_BYTES / MB:.0f} MB estimated",
            "`load`, `capacity`, `sweep --workers`",
        ],
        ["a testbed fleet's agent", f"{AGENT_BYTES / MB:.0f} MB estimated", "`testbed run`"],
        ["copies of rows while read", f"{READ_COPIES}", "`plot`, the explorer, uploads"],
        ["an explorer path", f"{EXPLORER_PATH_CHARS:,} characters", "the dashboard"],
        ["an error line", f"{MAX_LINE_CHARS:,} characters", "the command line"],
        ["a base URL's server to accept", f"{CONNECT_TIMEOUT_S:g} s", "`testbed run --base-url`"],
        ["rollouts of a simulation", f"at least {MIN_ROLLOUTS}", "the command line and the API"],
    ]
    return table(["limit", "value", "where"], rows)


def quotes() -> list[Quote]:
    soak = json.loads(SOAK.read_text())
    memory = soak["server_rss_mb"]
    return [
        (
            PAGE,
            "holds {} idle TCP connections and {} WebSocket agents for {} s",
            (
                f"{soak['idle_connections']:,}",
                str(soak["agents"]),
                f"{soak['duration_s']:g}",
            ),
        ),
        (
            PAGE,
            "{} sockets at its peak, answered {} responses",
            (f"{soak['server_sockets_peak']:,}", f"{soak['responses_completed']:,}"),
        ),
        (
            PAGE,
            "resident memory went from {} MB to a peak of {} MB, against the stated bound",
            (f"{memory['baseline']:.0f}", f"{memory['peak']:.0f}"),
        ),
        (PAGE, "of {} MB (`MEMORY_BOUND_MB`)", (f"{soak['memory_bound_mb']:,}",)),
    ]


BLOCKS = {"testbed-limits": testbed_limits, "fixed-limits": fixed_limits}


if __name__ == "__main__":
    for name, block in BLOCKS.items():
        print(f"{name}:\n{block()}\n")
    show(quotes())
