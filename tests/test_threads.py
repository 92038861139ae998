"""Thread helpers: the row-block runner behind the feature maps visits every row once, at
any thread count, with one BLAS thread per block."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from kernelcourse._threads import available_cpus, for_each_row_block


@pytest.mark.parametrize("n", [0, 1, 7, 64, 1000])
@pytest.mark.parametrize("block", [1, 3, 64, 5000])
@pytest.mark.parametrize("n_threads", [1, 2, 5, None])
def test_every_row_is_visited_once(n, block, n_threads):
    visits = np.zeros(n, dtype=int)
    lock = threading.Lock()

    def work(start, stop):
        assert 0 <= start < stop <= n and stop - start <= block
        with lock:
            visits[start:stop] += 1

    for_each_row_block(n, block, work, n_threads)
    np.testing.assert_array_equal(visits, 1)


def test_threads_run_at_once_on_contiguous_runs_with_one_blas_thread_each():
    before = [(i["user_api"], i["num_threads"]) for i in threadpool_info()]
    # Both threads must reach the barrier before either goes on: the runs are concurrent.
    barrier = threading.Barrier(2, timeout=30)
    seen = {}

    def work(start, stop):
        if start in (0, 50):
            barrier.wait()
            # One BLAS thread per block while the blocks run: no oversubscription.
            assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} == {1}
        seen.setdefault(threading.get_ident(), []).append(start)

    for_each_row_block(100, 10, work, n_threads=2)
    assert sorted(seen.values()) == [[0, 10, 20, 30, 40], [50, 60, 70, 80, 90]]
    assert [(i["user_api"], i["num_threads"]) for i in threadpool_info()] == before


def test_errors_in_a_block_reach_the_caller():
    def work(start, stop):
        if start == 30:
            raise RuntimeError("block at 30")

    with pytest.raises(RuntimeError, match="block at 30"):
        for_each_row_block(100, 10, work, n_threads=2)


def test_available_cpus_is_positive():
    assert available_cpus() >= 1
