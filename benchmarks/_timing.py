"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time


def best_time(fn, repeat=3):
    """Best wall-clock time of ``fn()`` over ``repeat`` runs (the least disturbed by noise)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def result(name, ours_s, reference_s, target):
    """One benchmark row; ``ratio`` > 1 means ours is faster."""
    return {
        "name": name,
        "ours_s": ours_s,
        "reference_s": reference_s,
        "ratio": reference_s / ours_s,
        "target": target,
    }
