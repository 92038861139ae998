"""Gram-matrix construction: kernelcourse.kernels vs sklearn.metrics.pairwise."""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from kernelcourse.kernels import RBF, Laplacian

from ._timing import best_times, result


def run(smoke=False):
    n, d = (200, 10) if smoke else (5000, 54)
    X = np.random.default_rng(0).normal(size=(n, d))
    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        ours, ref = best_times(
            [lambda Xd=Xd: RBF(0.02)(Xd), lambda Xd=Xd: rbf_kernel(Xd, gamma=0.02)], repeat=3
        )
        rows.append(result(f"RBF Gram n={n} d={d} {np.dtype(dtype).name}", ours, ref, 1.0))
    m = n // 5
    ours, ref = best_times(
        [lambda: Laplacian(0.02)(X[:m]), lambda: laplacian_kernel(X[:m], gamma=0.02)], repeat=3
    )
    rows.append(result(f"Laplacian Gram n={m} d={d}", ours, ref, 1.0))
    return rows
