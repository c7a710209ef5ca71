"""Where a sweep's chunks run: in this process, on a local Dask cluster or on a scheduler.

A scheduler address is checked before anything else happens, and a scheduler
that does not answer within ``CONNECT_TIMEOUT_S`` is a one-line error, so a
sweep given a wrong address fails fast and leaves nothing behind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from models.errors import ScenarioError
from sim.analysis.workers_need import check_workers as limit_workers
from sim.analysis.workers_need import usable_cores

CONNECT_TIMEOUT_S = 10
"""How long a sweep waits for its scheduler to answer."""


def check_workers(workers: int | None, share_bytes: float = 0.0) -> None:
    """Refuse a number of local worker processes that is negative, far above the cores, or
    over the memory cap with ``share_bytes`` of work each (``sim.analysis.workers_need``)."""
    if workers is None:
        return
    if workers < 0:
        raise ScenarioError(f"--workers = {workers}: must be >= 0")
    if workers > 0:
        limit_workers("--workers", workers, share_bytes)


NETWORK_SCHEMES = ("tcp", "tls")
"""Protocols a scheduler in another process is reached by here (``inproc://`` lives inside
one process; ``ucx://`` and ``ws://`` need packages this project does not install)."""


def check_address(address: str) -> None:
    """Refuse a scheduler address this command cannot reach: one Dask cannot parse, of a
    protocol other than ``NETWORK_SCHEMES``, or without a host and a port."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    allowed = "e.g. tcp://HOST:8786"
    shown = repr(address) if len(address) <= 80 else repr(address[:77] + "...")
    try:
        scheme, location = parse_address(address, strict=True)
    except ValueError:
        raise ScenarioError(f"--scheduler {shown}: not a scheduler address; {allowed}") from None
    if scheme not in NETWORK_SCHEMES:
        known = ", ".join(f"{name}://" for name in NETWORK_SCHEMES)
        raise ScenarioError(
            f"--scheduler {shown}: protocol {scheme}:// not supported; allowed: {known}"
        )
    try:
        host, port = parse_host_port(location)
    except ValueError as error:
        raise ScenarioError(f"--scheduler {shown}: {error}; {allowed}") from None
    if not host or not 0 < int(port) < 65536:
        raise ScenarioError(f"--scheduler {shown}: needs a host and a port; {allowed}")


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address`` (checked first); a scheduler that does
    not answer within ``CONNECT_TIMEOUT_S`` is a one-line error."""
    check_address(address)
    from dask.distributed import Client

    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as error:
        raise ScenarioError(
            f"--scheduler {address}: no Dask scheduler answered within "
            f"{CONNECT_TIMEOUT_S} s ({str(error).splitlines()[0]})"
        ) from None


@contextmanager
def client(workers: int | None, scheduler: str | None) -> Iterator[Any]:
    """A Dask client: of ``scheduler``, else of a new local cluster; None for ``workers = 0``."""
    if scheduler is None and workers == 0:
        yield None
        return
    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        with connect(scheduler) as connected:
            yield connected
        return
    cluster = LocalCluster(
        n_workers=workers or usable_cores(),
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
