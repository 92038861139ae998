"""Nystroem fit + transform, kernelcourse vs sklearn.kernel_approximation (N=50 000, m=1000).

Same landmarks on both sides (same ``random_state``), so both compute the same K̃. Ours is faster
because K̂ is eigen-decomposed (``eigh``) instead of SVD-factored, and because its map is
triangular (L⁻¹ with K̂ = LLᵀ, a rotation of scikit-learn's K̂^{-1/2}): the N × m × m product,
most of the work, is a triangular one in place (``trmm``, half the operations of ``gemm``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.kernel_approximation import Nystroem as SkNystroem

from kernelcourse.features import Nystroem, RankDeficiencyWarning

from ._timing import best_times, result


def run(smoke=False):
    n, d, m = (500, 10, 50) if smoke else (50_000, 54, 1000)
    X = np.random.default_rng(0).normal(size=(n, d))
    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)

        def ours(Xd=Xd):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RankDeficiencyWarning)
                return Nystroem(n_components=m, random_state=0).fit(Xd).transform(Xd)

        def ref(Xd=Xd):
            return SkNystroem(n_components=m, random_state=0).fit(Xd).transform(Xd)

        t_ours, t_ref = best_times([ours, ref], repeat=3)
        name = f"fit+transform N={n} d={d} m={m} {np.dtype(dtype).name}"
        rows.append(result(name, t_ours, t_ref, 1.5))
    return rows
