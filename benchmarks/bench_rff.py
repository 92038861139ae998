"""Random Fourier features: RandomFourierFeatures.transform vs sklearn's RBFSampler.transform."""

from __future__ import annotations

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from kernelcourse.features import RandomFourierFeatures

from ._timing import best_times, result


def run(smoke=False):
    n, d, D = (500, 10, 64) if smoke else (50_000, 54, 2000)
    X = np.random.default_rng(0).normal(size=(n, d))
    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        ours = RandomFourierFeatures(gamma=0.02, n_components=D, random_state=0).fit(Xd)
        ref = RBFSampler(gamma=0.02, n_components=D, random_state=0).fit(Xd)
        # Same draws, so the outputs can be compared: the speed must not cost accuracy.
        err = float(np.abs(ours.transform(Xd[:1000]) - ref.transform(Xd[:1000])).max())
        if err > 1e-6:
            raise AssertionError(f"features differ from RBFSampler by {err:.3g} > 1e-6")
        t_ours, t_ref = best_times(
            [lambda o=ours, Xd=Xd: o.transform(Xd), lambda r=ref, Xd=Xd: r.transform(Xd)],
            repeat=7 if dtype == np.float32 else 3,
        )
        name = f"RFF transform n={n} d={d} D={D} {np.dtype(dtype).name}"
        rows.append(result(name, t_ours, t_ref, 2.0))
    return rows
