"""Threads and BLAS: how many CPUs to use, one BLAS thread where more would only contend, and
row blocks of an (n, ·) output shared among threads.

The feature maps fill their output a block of rows at a time: a small matrix product followed
by element-wise passes (cos, exp) while the block is in cache. numpy's element-wise ufuncs run
on one thread, so the blocks themselves are spread over threads instead, with BLAS limited to
one thread per block to avoid oversubscription. Every step releases the GIL.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import ThreadpoolController

__all__ = ["available_cpus", "for_each_row_block", "single_blas_thread"]


def available_cpus():
    """The CPUs this process may run on (respecting pinning by taskset or a container)."""
    if hasattr(os, "sched_getaffinity"):  # not on macOS
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@functools.cache
def _blas_controller():
    # Built once: scanning the loaded libraries costs ~2 ms, a noticeable share of a transform.
    # The callers multiply with numpy's and scipy's BLAS, loaded before the first call.
    return ThreadpoolController()


# BLAS's thread count is one setting for the whole process, so the threads inside
# single_blas_thread() share one limit: the first to enter sets it, the last to leave restores
# what the first found. (A limiter per call records the limit another call has just set, and
# restoring that leaves BLAS on one thread for good.)
_limit_lock = threading.Lock()
_limit_users = 0
_limiter = None


@contextlib.contextmanager
def single_blas_thread():
    """Context manager limiting BLAS to one thread while it is active.

    Safe to enter from several threads at once and to nest: the limits found before the
    first entry come back when the last user leaves.
    """
    global _limit_users, _limiter
    with _limit_lock:
        if _limit_users == 0:
            _limiter = _blas_controller().limit(limits=1, user_api="blas")
        _limit_users += 1
    try:
        yield
    finally:
        with _limit_lock:
            _limit_users -= 1
            if _limit_users == 0:
                _limiter.restore_original_limits()
                _limiter = None


def for_each_row_block(n, block, work, n_threads=None):
    """Call ``work(start, stop)`` for the blocks ``[start, stop)`` of ``range(n)``.

    Each of ``n_threads`` threads (None: :func:`available_cpus`) takes a contiguous run of
    blocks, so neighbouring rows are written by one thread. ``work`` must write disjoint rows.
    """
    if n_threads is None:
        n_threads = available_cpus()
    elif (
        isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1
    ):
        raise ValueError(f"n_threads must be None or an integer >= 1, got {n_threads!r}.")
    starts = list(range(0, n, block))
    n_threads = max(1, min(int(n_threads), len(starts)))

    def run(chunk):
        for start in chunk:
            work(start, min(start + block, n))

    if n_threads == 1:
        run(starts)
        return
    per = -(-len(starts) // n_threads)
    chunks = [starts[i : i + per] for i in range(0, len(starts), per)]
    with single_blas_thread():
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            for f in [pool.submit(run, c) for c in chunks]:
                f.result()
