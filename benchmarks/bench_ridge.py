"""Kernel ridge regression fit + predict: kernelcourse.ridge.KernelRidge vs scikit-learn's."""

from __future__ import annotations

import numpy as np
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge

from kernelcourse.ridge import KernelRidge

from ._timing import best_times, result


def run(smoke=False):
    # n = 5000 points in d = 54 dimensions (the size of Covertype's feature vector), RBF kernel.
    n, d, n_test = (300, 10, 50) if smoke else (5000, 54, 1000)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    X_test = rng.normal(size=(n_test, d))
    gamma, lam = 1.0 / d, 1.0
    repeat = 1 if smoke else 5

    def reference():
        SklearnKernelRidge(alpha=lam, kernel="rbf", gamma=gamma).fit(X, y).predict(X_test)

    models = {
        dtype: KernelRidge(kernel="rbf", gamma=gamma, lam=lam, dtype=np.dtype(dtype))
        for dtype in ("float64", "float32")
    }
    fits = [lambda model=model: model.fit(X, y).predict(X_test) for model in models.values()]
    t_ref, *t_ours = best_times([reference, *fits], repeat)
    return [
        result(f"KernelRidge RBF fit+predict n={n} d={d} {dtype}", t, t_ref, 1.5)
        for dtype, t in zip(models, t_ours, strict=True)
    ]
