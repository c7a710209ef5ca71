"""What one client can make the emulator hold, and the connections it may keep open.

A server on loopback still meets hostile clients: thousands of idle sockets,
a 600 MB body, a million stored responses, a WebSocket that queues creates
faster than they run.  Each is bounded here and answered with the Responses
API's error shapes: 413 for a body over the limit, 429 for a client over its
open connections or its WebSocket queue, 400 ``invalid_request_error`` for a
malformed request; stored responses expire after a time to live and, oldest
first, when their bytes pass a budget (a continuation then gets
``previous_response_not_found``, as after the real service's retention).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

MB = 2**20
FD_RESERVE = 64
"""Descriptors kept free beyond the connection limit (listener, pipes, logs, files)."""


@dataclass(frozen=True)
class Limits:
    """Per-client limits of an emulator (defaults documented in docs/testbed.md)."""

    max_body_bytes: int = 16 * MB
    """Largest HTTP request body read; a larger one is refused with 413, unread."""
    max_connections_per_client: int = 10_000
    """Open connections from one client address; further ones are answered 429."""
    store_ttl_s: float = 3600.0
    """Wall seconds a stored response may be continued (the real service keeps them longer)."""
    store_budget_bytes: int = 256 * MB
    """Bytes of stored conversations kept, counted as the text of each response's whole
    context (an upper bound of the memory they hold); the oldest go first."""
    ws_queue_length: int = 64
    """``response.create`` events one WebSocket may have waiting; further ones get a 429
    error event."""


def raise_descriptor_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


def connection_limit(limits: Limits, descriptors: int) -> int:
    """Open connections the server accepts from one client: its limit, and never more than
    the descriptors leave room for."""
    return max(1, min(limits.max_connections_per_client, descriptors - FD_RESERVE))
