"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time


def best_times(fns, repeat=5):
    """Best wall-clock time of each of ``fns`` over ``repeat`` rounds (the best is the run least
    disturbed by noise). Each round calls every function once, so that a noisy stretch of a
    shared machine slows all of them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
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
