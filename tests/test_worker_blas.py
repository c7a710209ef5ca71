"""Local replication workers run their BLAS on one thread each.

The workers are one per core already; a BLAS thread per core in each, woken by a
block's matrix product and then spinning, would take the other workers' cores.
"""

from __future__ import annotations

from threadpoolctl import threadpool_info

from sim.sweep.workers import replication_workers


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_each_local_worker_runs_its_blas_on_one_thread() -> None:
    with replication_workers(2, None) as pool:
        assert pool.executor is not None
        in_workers = list(pool.executor.map(_blas_threads_after_numpy, range(2)))
    # Each BLAS library loaded (numpy's, scipy's once imported) on one thread.
    assert all(threads and set(threads) == {1} for threads in in_workers), in_workers


def _blas_threads_after_numpy(_task: int) -> list[int]:
    import numpy as np

    np.ones((64, 64)) @ np.ones((64, 64))
    return blas_threads()
