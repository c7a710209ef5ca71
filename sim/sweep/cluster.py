"""Where a sweep's chunks run: in this process, on a local Dask cluster or on a scheduler.

A scheduler address is checked before anything else happens, and a scheduler
that does not answer within ``CONNECT_TIMEOUT_S`` is a one-line error, so a
sweep given a wrong address fails fast and leaves nothing behind.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from models.errors import ScenarioError

CONNECT_TIMEOUT_S = 10
"""How long a sweep waits for its scheduler to answer."""
MAX_WORKERS_PER_CORE = 4
"""Local workers allowed per core: each is a Python process of its own."""


def default_workers() -> int:
    """One worker per core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def check_workers(workers: int | None) -> None:
    """Refuse a number of local worker processes that is negative or far above the cores."""
    if workers is None:
        return
    most = MAX_WORKERS_PER_CORE * default_workers()
    if workers < 0:
        raise ScenarioError(f"--workers = {workers}: must be >= 0")
    if workers > most:
        raise ScenarioError(
            f"--workers = {workers}: at most {most} "
            f"({MAX_WORKERS_PER_CORE} per core, {default_workers()} cores)"
        )


def check_address(address: str) -> None:
    """Refuse a scheduler address Dask cannot parse, e.g. one without a port."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port
    from distributed.comm.registry import backends

    allowed = "e.g. tcp://HOST:8786"
    try:
        scheme, location = parse_address(address, strict=True)
    except ValueError:
        raise ScenarioError(
            f"--scheduler {address!r}: not a scheduler address; {allowed}"
        ) from None
    if scheme not in backends:
        known = ", ".join(f"{name}://" for name in sorted(backends))
        raise ScenarioError(f"--scheduler {address!r}: unknown protocol; allowed: {known}")
    if scheme in ("tcp", "tls"):
        try:
            host, port = parse_host_port(location)
        except ValueError as error:
            raise ScenarioError(f"--scheduler {address!r}: {error}; {allowed}") from None
        if not host or not 0 < int(port) < 65536:
            raise ScenarioError(f"--scheduler {address!r}: needs a host and a port; {allowed}")


@contextmanager
def client(workers: int | None, scheduler: str | None) -> Iterator[Any]:
    """A Dask client: of ``scheduler``, else of a new local cluster; None for ``workers = 0``."""
    if scheduler is None and workers == 0:
        yield None
        return
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            connected = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as error:
            raise ScenarioError(
                f"--scheduler {scheduler}: no Dask scheduler answered within "
                f"{CONNECT_TIMEOUT_S} s ({str(error).splitlines()[0]})"
            ) from None
        with connected:
            yield connected
        return
    cluster = LocalCluster(
        n_workers=workers or default_workers(),
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        # Without a dashboard the scheduler still serves its health routes, on port 8787
        # unless told otherwise (and warns when that port is taken): any free loopback port.
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.ERROR,
    )
    with cluster, Client(cluster) as local:
        yield local
