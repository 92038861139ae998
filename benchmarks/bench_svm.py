"""SVM training: KernelSVC vs LIBSVM (sklearn SVC), PrimalSVC vs LIBLINEAR (LinearSVC).

Data: Covertype (cover type 2 "lodgepole pine" against the rest), the first 60 000 rows of
covtype.data.gz shuffled with seed 0, standardised, d = 54; RBF kernel with γ = 1/54, C = 1.
The primal benchmark uses D = 500 random cosine features of the same rows. Falls back to a
synthetic set of the same shape when the data file is absent. Each row also checks that the
two solvers agree (dual objective / test predictions) before reporting a time.
"""

from __future__ import annotations

import gzip
import os
import pathlib

import numpy as np
from sklearn.svm import SVC, LinearSVC

from kernelcourse.kernels import RBF
from kernelcourse.svm import KernelSVC, PrimalSVC

from ._timing import best_times, result


def _covtype(n_rows):
    path = pathlib.Path(os.environ.get("KERNELCOURSE_DATA", "")) / "covtype.data.gz"
    if path.is_file():
        with gzip.open(path) as fh:
            raw = np.loadtxt(fh, delimiter=",", max_rows=60000)
        raw = raw[np.random.default_rng(0).permutation(len(raw))[:n_rows]]
        X, y = raw[:, :-1], np.where(raw[:, -1] == 2, 1, -1)
    else:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n_rows, 54))
        y = np.where(np.sin(X[:, :4].sum(1)) + 0.3 * rng.normal(size=n_rows) > 0, 1, -1)
    X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)
    return X, y


def _dual_objective(model_coef, K):
    return float(np.abs(model_coef).sum() - 0.5 * model_coef @ K @ model_coef)


def run(smoke=False):
    sizes = (300,) if smoke else (5000, 10000)
    n_test = 200 if smoke else 2000
    X, y = _covtype(max(sizes) + n_test)
    Xte = X[-n_test:]
    gamma, rows = 1.0 / X.shape[1], []
    repeat = 1 if smoke else 2
    for n in sizes:
        Xtr, ytr = X[:n], y[:n]
        ours = KernelSVC(gamma=gamma, C=1.0)
        ref = SVC(gamma=gamma, C=1.0, cache_size=1000)
        t_ours, t_ref = best_times(
            [
                lambda ours=ours, Xtr=Xtr, ytr=ytr: ours.fit(Xtr, ytr),
                lambda ref=ref, Xtr=Xtr, ytr=ytr: ref.fit(Xtr, ytr),
            ],
            repeat,
        )
        obj_ref = _dual_objective(ref.dual_coef_[0], RBF(gamma)(ref.support_vectors_))
        rel = abs(ours.dual_objective_ - obj_ref) / abs(obj_ref)
        agree = np.mean(ours.predict(Xte) == ref.predict(Xte))
        name = (
            f"KernelSVC.fit n={n} (obj rel {rel:.0e}, agree {agree:.4f}, "
            f"SV {len(ours.support_)}/{len(ref.support_)})"
        )
        rows.append(result(name, t_ours, t_ref, 1.0))
    # Primal SVM on D random cosine features (lecture 003's algorithm) vs LIBLINEAR.
    n, D = (300, 50) if smoke else (10000, 500)
    rng = np.random.default_rng(1)
    Omega = rng.normal(scale=np.sqrt(2 * gamma), size=(X.shape[1], D))
    b = rng.uniform(0, 2 * np.pi, D)
    Z = np.sqrt(2.0 / D) * np.cos(X[:n] @ Omega + b)
    Zte = np.sqrt(2.0 / D) * np.cos(Xte @ Omega + b)
    for loss in ("squared_hinge", "hinge"):
        ours = PrimalSVC(C=1.0, loss=loss, random_state=0)
        ref = LinearSVC(C=1.0, loss=loss, random_state=0)
        t_ours, t_ref = best_times(
            [lambda ours=ours: ours.fit(Z, y[:n]), lambda ref=ref: ref.fit(Z, y[:n])], repeat
        )
        agree = np.mean(ours.predict(Zte) == ref.predict(Zte))
        rows.append(
            result(f"PrimalSVC.fit {loss} n={n} D={D} (agree {agree:.4f})", t_ours, t_ref, 1.0)
        )
    return rows
