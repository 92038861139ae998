"""SVM training: KernelSVC vs LIBSVM (sklearn SVC) and oneDAL; PrimalSVC vs LIBLINEAR.

Data: Covertype (cover type 2 "lodgepole pine" against the rest), the first 120 000 rows of
covtype.data.gz shuffled with seed 0 and standardised, d = 54; the last 10 000 of them are the
test set, the first n the training set. RBF kernel with γ = 1/54, C = 1, tol = 1e-3 and a
1000 MB kernel cache for every solver. Sizes: n = 5 000 and 20 000, or the comma-separated
list in ``KERNELCOURSE_BENCH_SVM_SIZES`` (the record sizes are 5000,20000,50000,100000).
oneDAL's SVC (``sklearnex.svm.SVC``, the optional ``bench`` extra) is timed when installed;
otherwise its row says "not installed". Falls back to a synthetic set of the same shape when
the data file is absent.

A row reports a time only after checking that the solvers agree: the same dual objective
within 1e-3 relative and the same test accuracy within 0.1 points. The fits alternate in one
process (best of three at n <= 5000, of two at n <= 20 000), so a noisy stretch of a shared
machine slows all alike.
The primal benchmark uses D = 500 random cosine features of the same rows.
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

SIZES = (5000, 20000)
N_TEST = 10_000
CACHE_MB = 1000


def _covtype(n_rows, pool=120_000):
    path = pathlib.Path(os.environ.get("KERNELCOURSE_DATA", "")) / "covtype.data.gz"
    if path.is_file():
        with gzip.open(path) as fh:
            raw = np.loadtxt(fh, delimiter=",", max_rows=max(pool, n_rows))
        raw = raw[np.random.default_rng(0).permutation(len(raw))]
        X, y = raw[:, :-1], np.where(raw[:, -1] == 2, 1, -1)
    else:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(max(pool, n_rows), 54))
        y = np.where(np.sin(X[:, :4].sum(1)) + 0.3 * rng.normal(size=len(X)) > 0, 1, -1)
    X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)
    return X, y


def _sizes():
    text = os.environ.get("KERNELCOURSE_BENCH_SVM_SIZES", "").strip()
    if not text:
        return SIZES
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 2:
        raise ValueError(
            f"KERNELCOURSE_BENCH_SVM_SIZES must be comma-separated sizes >= 2, got {text!r}."
        )
    return sizes


def _onedal_svc():
    """oneDAL's SVC class, or None when scikit-learn-intelex is not installed."""
    try:
        from sklearnex.svm import SVC as OneDalSVC
    except ImportError:
        return None
    return OneDalSVC


def _dual_objective(coef, sv, gamma):
    """1ᵀα − ½ αᵀGα from signed coefficients y_i α_i, a block of rows at a time."""
    kernel, quad = RBF(gamma), 0.0
    for start in range(0, len(coef), 2048):
        quad += coef[start : start + 2048] @ (kernel(sv[start : start + 2048], sv) @ coef)
    return float(np.abs(coef).sum() - 0.5 * quad)


def _check_agreement(name, obj, acc, obj_ref, acc_ref):
    rel = abs(obj - obj_ref) / abs(obj_ref)
    if rel > 1e-3 or abs(acc - acc_ref) > 1e-3:
        raise AssertionError(
            f"{name}: KernelSVC and the reference disagree: dual objective {obj:.6g} vs "
            f"{obj_ref:.6g} (relative {rel:.1e}), test accuracy {acc:.4f} vs {acc_ref:.4f}"
        )
    return rel


def kernel_rows(smoke=False):
    """The KernelSVC rows: one against LIBSVM and one against oneDAL per size."""
    sizes = (300,) if smoke else _sizes()
    n_test = 200 if smoke else N_TEST
    X, y = _covtype(max(sizes) + n_test, pool=2000 if smoke else 120_000)
    Xte, yte = X[-n_test:], y[-n_test:]
    gamma, rows = 1.0 / X.shape[1], []
    onedal = _onedal_svc()
    # The first fit in a fresh process compiles the SMO loops (for float64 Gram blocks and
    # float32 cached rows): not part of any timing.
    KernelSVC(gamma=gamma).fit(X[:600], y[:600])
    if not smoke:
        KernelSVC(gamma=gamma).fit(X[:2100], y[:2100])
    for n in sizes:
        Xtr, ytr = X[:n], y[:n]
        common = {"gamma": gamma, "C": 1.0, "tol": 1e-3, "cache_size": CACHE_MB}
        models = [KernelSVC(**common), SVC(**common)]
        if onedal is not None:
            models.append(onedal(**common))
        fits = [lambda m=m, Xtr=Xtr, ytr=ytr: m.fit(Xtr, ytr) for m in models]
        times = best_times(fits, 1 if smoke or n > 20000 else 2 if n > 5000 else 3)
        ours = models[0]
        obj, acc = ours.dual_objective_, ours.score(Xte, yte)
        for ref, t_ref, label in zip(models[1:], times[1:], ("LIBSVM", "oneDAL"), strict=False):
            obj_ref = _dual_objective(ref.dual_coef_[0], ref.support_vectors_, gamma)
            acc_ref = ref.score(Xte, yte)
            name = f"KernelSVC.fit vs {label} n={n}"
            rel = _check_agreement(name, obj, acc, obj_ref, acc_ref)
            name += f" (obj rel {rel:.0e}, acc {100 * acc:.2f}/{100 * acc_ref:.2f} %)"
            rows.append(result(name, times[0], t_ref, 1.5 if label == "LIBSVM" else 0.5))
        if onedal is None:
            rows.append(
                {"name": f"KernelSVC.fit vs oneDAL n={n}: not installed", "skipped": True}
            )
    return rows


def run(smoke=False):
    rows = kernel_rows(smoke)
    # Primal SVM on D random cosine features (lecture 003's algorithm) vs LIBLINEAR.
    n, D = (300, 50) if smoke else (10000, 500)
    X, y = _covtype(n + 2000, pool=2000 if smoke else 120_000)
    Xte = X[-2000:]
    gamma = 1.0 / X.shape[1]
    rng = np.random.default_rng(1)
    Omega = rng.normal(scale=np.sqrt(2 * gamma), size=(X.shape[1], D))
    b = rng.uniform(0, 2 * np.pi, D)
    Z = np.sqrt(2.0 / D) * np.cos(X[:n] @ Omega + b)
    Zte = np.sqrt(2.0 / D) * np.cos(Xte @ Omega + b)
    for loss in ("squared_hinge", "hinge"):
        ours = PrimalSVC(C=1.0, loss=loss, random_state=0)
        ref = LinearSVC(C=1.0, loss=loss, random_state=0)
        t_ours, t_ref = best_times(
            [lambda ours=ours: ours.fit(Z, y[:n]), lambda ref=ref: ref.fit(Z, y[:n])],
            1 if smoke else 2,
        )
        agree = np.mean(ours.predict(Zte) == ref.predict(Zte))
        rows.append(
            result(f"PrimalSVC.fit {loss} n={n} D={D} (agree {agree:.4f})", t_ours, t_ref, 1.0)
        )
    return [r for r in rows if not r.get("skipped")] if smoke else rows
