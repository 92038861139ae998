"""Thread helpers: the row-block runner behind the feature maps visits every row once, at
any thread count, with one BLAS thread per block."""

import os
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from kernelcourse._threads import available_cpus, for_each_row_block, single_blas_thread


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


def _blas_threads():
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


def test_overlapping_single_thread_limits_restore_the_original_count():
    # A enters, B enters, A leaves, B leaves: B must not restore the 1 that A had set.
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        a, b = single_blas_thread(), single_blas_thread()
        a.__enter__()
        b.__enter__()
        assert _blas_threads() == [1]
        a.__exit__(None, None, None)
        assert _blas_threads() == [1]  # B still runs
        b.__exit__(None, None, None)
        assert _blas_threads() == before


@pytest.mark.parametrize("make", ["fourier", "nystroem"])
def test_concurrent_transforms_leave_blas_threads_as_they_were(make):
    from kernelcourse.features import Nystroem, RandomFourierFeatures

    X = np.random.default_rng(0).normal(size=(400, 5))
    if make == "fourier":
        est = RandomFourierFeatures(n_components=64, n_threads=2, random_state=0).fit(X)
    else:
        est = Nystroem(n_components=30, random_state=0).fit(X)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        errors = []

        def many():
            try:
                for _ in range(30):
                    est.transform(X)
            except Exception as err:  # reported below
                errors.append(err)

        threads = [threading.Thread(target=many) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert _blas_threads() == before


def test_blas_threads_restored_after_concurrent_use_fresh_process():
    # In a fresh interpreter (nothing else has touched the limits): the snapshot is taken
    # after the imports, since scipy loads a BLAS of its own that threadpool_info then lists.
    import subprocess
    import sys

    code = """
import threading
import numpy as np
from threadpoolctl import threadpool_info
from kernelcourse.features import Nystroem, RandomFourierFeatures

def blas():
    return sorted(
        (i["filepath"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"
    )

X = np.random.default_rng(0).normal(size=(300, 5))
ests = [
    RandomFourierFeatures(n_components=64, n_threads=2, random_state=0).fit(X),
    Nystroem(n_components=30, random_state=0).fit(X),
]
before = blas()
def many(est):
    for _ in range(15):
        est.transform(X)
threads = [threading.Thread(target=many, args=(ests[i % 2],)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert all(n == 2 for _, n in before), before
assert blas() == before, (before, blas())
print("restored")
"""
    # two BLAS threads to start from, whatever the test run itself uses
    env = {**os.environ, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0 and "restored" in out.stdout, out.stderr[-2000:]
