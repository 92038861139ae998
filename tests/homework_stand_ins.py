"""Run every graded self-check with calls into the installed package standing in for the student.

Used by tests/test_homework_package.py in a fresh interpreter whose ``kernelcourse`` is a wheel
installed in a temporary folder. Prints one JSON object: for each graded stub, whether each
stand-in failed its check (it must) and, for the stand-ins marked exact, whether it passes once
the guard is switched off (proving that the guard, not a wrong answer, makes it fail).
"""

import contextlib
import io
import json
import sys

import numpy as np
import scipy.sparse as sp
from scipy import special
from sklearn.base import BaseEstimator, TransformerMixin

import kernelcourse
from kernelcourse import bounds, features, kernels, ridge, scale, sgd, spectral, svm
from kernelcourse.homework import check
from kernelcourse.homework.check import _core


def _seed(rng):
    return int(rng.integers(2**31))


class _Transformer(TransformerMixin, BaseEstimator):
    """The check's feature map ψ as a fitted scikit-learn transformer."""

    def __init__(self, psi=None):
        self.psi = psi

    def fit(self, X=None, y=None):
        self.fitted_ = True
        return self

    def transform(self, X):
        return self.psi(X)


def _svc(K, y, C):
    fitted = svm.KernelSVC(kernel="precomputed", C=C, tol=1e-8).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[fitted.support_] = np.abs(fitted.dual_coef_[0])
    return alpha, float(fitted.intercept_[0])


def _touch():
    """One call into the package, for stubs that have no public equivalent there."""
    kernels.Linear()


def _sketch_product(F1, F2, D, rng):
    _touch()
    R = rng.choice([-1.0, 1.0], size=(F1.shape[1], D))
    S = rng.choice([-1.0, 1.0], size=(F2.shape[1], D))
    return (F1 @ R) * (F2 @ S) / np.sqrt(D)


def _anova(X, Y, r):
    """K_r by Newton's identities from the power sums Σ_j (x_j y_j)^k, each a linear kernel of
    the k-th powers."""
    if r < 0:
        raise ValueError("r must be non-negative")
    p = [kernels.Linear()(X**k, Y**k) for k in range(1, r + 1)]
    e = [np.ones((len(X), len(Y)))]
    for k in range(1, r + 1):
        e.append(sum((-1) ** (i - 1) * e[k - i] * p[i - 1] for i in range(1, k + 1)) / k)
    return e[r]


def _fejer_features(X, D, gamma, rng):
    """The package's scrambled Halton points through the quantile of (1 − cos t)/(πt²), found by
    bisection: the triangle kernel's quasi-Monte Carlo features."""
    U = spectral._qmc_uniforms(D, X.shape[1], np.random.RandomState(_seed(rng)), "halton")
    tail = np.minimum(U, 1 - U)
    lo, hi = np.zeros_like(U), 2 / (np.pi * tail)
    for _ in range(120):
        t = (lo + hi) / 2
        upper = 0.5 - (special.sici(t)[0] - (1 - np.cos(t)) / t) / np.pi
        lo, hi = np.where(upper > tail, t, lo), np.where(upper > tail, hi, t)
    T = X @ (gamma * np.where(U < 0.5, -1, 1) * (lo + hi) / 2).T
    return np.hstack([np.cos(T), np.sin(T)]) / np.sqrt(D)


def _loo_and_gcv(K, y, lams):
    _touch()
    mu, U = np.linalg.eigh(K)
    z, E, gcv = U.T @ y, [], []
    for lam in lams:
        s = lam / (np.maximum(mu, 0) + lam)
        E.append(U @ (s * z) / (U**2 @ s))
        gcv.append(len(y) * np.sum((s * z) ** 2) / np.sum(s) ** 2)
    return np.array(E), np.array(gcv)


def _loo_refits(K, y, lams):
    n = len(y)
    E = np.empty((len(lams), n))
    for j, lam in enumerate(lams):
        for i in range(n):
            keep = np.arange(n) != i
            alpha = ridge.solve_regularized_psd(K[np.ix_(keep, keep)], y[keep], lam)
            E[j, i] = y[i] - K[i, keep] @ alpha
    return E, np.mean(E**2, axis=1)


def _kfold(K, y, lams, folds):
    _touch()
    mu, U = np.linalg.eigh(K)
    z, E = U.T @ y, np.empty((len(lams), len(y)))
    for j, lam in enumerate(lams):
        s = lam / (np.maximum(mu, 0) + lam)
        r = U @ (s * z)
        for fold in folds:
            E[j, fold] = np.linalg.solve((U[fold] * s) @ U[fold].T, r[fold])
    return E


def _duality_gap(alpha, K, y, C):
    _touch()
    beta = alpha * y
    Kb = K @ beta
    dual = float(alpha.sum() - 0.5 * beta @ Kb)
    n_pos = int(np.sum(y > 0))
    b = float(np.sort(y - Kb)[n_pos - 1])
    primal = 0.5 * beta @ Kb + C * np.maximum(0.0, 1.0 - y * (Kb + b)).sum()
    return dual, float(primal - dual), b


def _smo_step(alpha, K, y, C, i, j):
    _touch()
    alpha = np.array(alpha, dtype=float)
    g = 1.0 - y * (K @ (alpha * y))
    slope, a = y[i] * g[i] - y[j] * g[j], K[i, i] + K[j, j] - 2 * K[i, j]
    lo_i, hi_i = sorted((-alpha[i] * y[i], (C - alpha[i]) * y[i]))
    lo_j, hi_j = sorted((alpha[j] * y[j], (alpha[j] - C) * y[j]))
    lo, hi = max(lo_i, lo_j), min(hi_i, hi_j)
    if a > 0:  # concave along the line: the clipped stationary point
        t = min(max(slope / a, lo), hi)
    else:  # convex or linear: the better end (LIBSVM's tiny a misses the far one)
        t = max((lo, hi), key=lambda s: slope * s - 0.5 * a * s * s)
    alpha[i] += y[i] * t
    alpha[j] -= y[j] * t
    return np.clip(alpha, 0.0, C)


def _nystroem_precond(kernel, X, landmarks, lam):
    # a pivoted Cholesky factor of K_mm gives Z with Z Zᵀ = K̃; Woodbury does the rest (the
    # question allows the kernels, so the package is touched elsewhere)
    bounds.hoeffding_deviation(100, 0.05)
    C = kernel(X, X[landmarks])
    S = np.array(C[landmarks], dtype=float)
    pivot, L, J = S.diagonal().copy(), np.zeros(S.shape), []
    stop = 1e-10 * pivot.max()
    while len(J) < len(S) and pivot.max() > stop:
        q = int(np.argmax(pivot))
        L[:, len(J)] = (S[:, q] - L[:, : len(J)] @ L[q, : len(J)]) / np.sqrt(pivot[q])
        pivot -= L[:, len(J)] ** 2
        J.append(q)
        pivot[J] = 0.0
    Z = np.linalg.solve(np.tril(L[J, : len(J)]), C[:, J].T).T
    inner = np.linalg.inv(Z.T @ Z + lam * np.eye(len(J)))
    return lambda v: (v - Z @ (inner @ (Z.T @ v))) / lam


def _pcg_ritz(matvec, b, precondition, tol, max_iter):
    # the package's CG for x; its residual history is no Lanczos matrix, so one value per step
    x, history = scale.conjugate_gradient(
        matvec, b, preconditioner=precondition, tol=tol, max_iter=max_iter
    )
    return x, np.ones(len(history) - 1)


def _fold_statistics(chunks, psi, fold_of, k):
    # one StreamingFeatureRidge per fold, fed each chunk's rows of that fold centred on their
    # own means; the terms for the spread of the means are merged by hand
    identity = _Transformer(lambda Z: Z).fit()
    models = [scale.StreamingFeatureRidge(features=identity) for _ in range(k)]
    n, ybar, q = np.zeros(k), np.zeros(k), np.zeros(k)
    zbar = None
    for X_block, y_block in chunks:
        labels, Z = np.asarray(fold_of(X_block)), psi(X_block)
        if zbar is None:
            D = Z.shape[1]
            zbar, S, t = np.zeros((k, D)), np.zeros((k, D, D)), np.zeros((k, D))
        for f in np.unique(labels):
            Z_f, y_f = Z[labels == f], np.asarray(y_block, dtype=float)[labels == f]
            m_z, m_y = Z_f.mean(axis=0), y_f.mean()
            models[f].partial_fit(Z_f - m_z, y_f - m_y)
            d_z, d_y = m_z - zbar[f], m_y - ybar[f]
            total = n[f] + len(y_f)
            weight = n[f] * len(y_f) / total
            S[f] += weight * np.outer(d_z, d_z)
            t[f] += weight * d_y * d_z
            q[f] += (y_f - m_y) @ (y_f - m_y) + weight * d_y**2
            zbar[f] += d_z * len(y_f) / total
            ybar[f] += d_y * len(y_f) / total
            n[f] = total
    for f, model in enumerate(models):
        if hasattr(model, "_ZtZ"):
            # its sums are about its first row (a, s): ZᵀZ = ZₛᵀZₛ + auᵀ + uaᵀ + m aaᵀ
            a, s, u, v = model._zshift, model._yshift[0], model._zsum, model._ysum[0]
            m = model.n_samples_seen_
            S[f] += model._ZtZ + np.outer(a, u) + np.outer(u, a) + m * np.outer(a, a)
            t[f] += model._Zty[:, 0] + u * s + a * v + m * s * a
    return n, zbar, ybar, S, t, q


def _cv_path(n, zbar, ybar, S, t, q, lams):
    k, D = zbar.shape
    errors, W = np.zeros(len(lams)), np.zeros((len(lams), k, D))
    b = np.zeros((len(lams), k))
    for f in range(k):
        r = np.arange(k) != f
        m_z, m_y = n[r] @ zbar[r] / n[r].sum(), n[r] @ ybar[r] / n[r].sum()
        d_z, d_y = zbar[r] - m_z, ybar[r] - m_y
        S_t = S[r].sum(0) + d_z.T @ (n[r][:, None] * d_z)
        t_t = t[r].sum(0) + d_z.T @ (n[r] * d_y)
        for j, lam in enumerate(lams):
            w = ridge.solve_regularized_psd(S_t, t_t, lam * n[r].sum())
            W[j, f], b[j, f] = w, m_y - m_z @ w
            e = ybar[f] - b[j, f] - zbar[f] @ w
            errors[j] += q[f] - 2 * t[f] @ w + w @ S[f] @ w + n[f] * e**2
    return errors / n.sum(), W, b


def _svrg_by_sgd(read, psi, lam, step_size, n_epochs, w0):
    # the package's plain SGD on the collected rows (no penalty, no variance reduction)
    blocks = list(read())
    X = np.vstack([X_block for X_block, _ in blocks])
    y = np.concatenate([y_block for _, y_block in blocks])
    result = sgd.sgd_approx_features_on_the_fly(
        X, y, _Transformer(psi).fit(), order=np.arange(len(y)), step_size=step_size
    )
    return np.asarray(w0, dtype=float) + result.coef


def _krr_offset(K, y, lam):
    u = ridge.solve_regularized_psd(K, y, lam)
    v = ridge.solve_regularized_psd(K, np.ones(len(y)), lam)
    b = u.sum() / v.sum()
    return u - b * v, float(b)


def _power(kernel, centers, X):
    B = kernel(centers, X)
    coef = ridge.solve_regularized_psd(kernel(centers, centers), B, 0.0)
    return np.sqrt(np.maximum(kernel.diag(X) - np.sum(B * coef, axis=0), 0.0))


def _p_greedy(kernel, candidates, m):
    chosen, p_max = [], []
    for _ in range(m):
        p = (
            _power(kernel, candidates[chosen], candidates)
            if chosen
            else np.sqrt(kernel.diag(candidates))
        )
        p[chosen] = -1.0
        chosen.append(int(np.argmax(p)))
        p_max.append(p[chosen[-1]])
    return np.array(chosen), np.array(p_max)


def _cosine_sinks(X, q, low, high, rng):
    sinks = features.RandomKitchenSinks("cosine", n_components=q, random_state=_seed(rng))
    Z = sinks.fit(X).transform(X)
    return Z, rng.integers(0, X.shape[1], size=q), rng.uniform(low, high, size=q)


def _box_least_squares(Z, y, C, tol, max_sweeps=10_000):
    alpha, _ = features.fit_box_constrained(
        Z, y, C, loss="squared", intercept=False, tol=1e-14, max_iter=10_000
    )
    # the package reports no sweep count; the check wants one sweep when the columns are
    # orthogonal (coordinate descent's) and fewer sweeps for a looser tol
    G = Z.T @ Z
    if np.abs(G - np.diag(np.diag(G))).max() <= 1e-10 * np.abs(G).max():
        return alpha, 1
    return alpha, max(2, int(np.ceil(-np.log10(tol))))


def _walk_cg(A1, labels1, A2, labels2, lam, tol=1e-13):
    match = (np.asarray(labels1)[:, None] == np.asarray(labels2)[None, :]).ravel()
    Ax = np.kron(A1, A2)[np.ix_(match, match)]
    if lam * np.abs(np.linalg.eigvalsh(Ax)).max() >= 1:
        raise ValueError("lam is too large")
    x, _ = scale.conjugate_gradient(
        lambda v: v - lam * (Ax @ v), np.ones(len(Ax)), max_iter=1000, tol=1e-14
    )
    return float(np.sum(x))


def _walk_cg_counted(A1, labels1, A2, labels2, lam, tol):
    return _walk_cg(A1, labels1, A2, labels2, lam), 1


def _rational_widths(size, gamma, rng):
    _touch()
    # the inverse of F(v) = 3v² − 2v³, the Beta(2, 2) law of 1 / (1 + γδ)
    v = 0.5 - np.sin(np.arcsin(1.0 - 2.0 * rng.random(size)) / 3.0)
    return (1.0 / v - 1.0) / gamma


def _hashed_binning(X, widths, shifts, n_buckets, seed=0):
    _touch()
    n, d = X.shape
    P = len(widths)
    prime = 2_147_483_647
    mult = np.random.default_rng(seed).integers(1, prime, size=(P, d + 1))
    cells = np.floor((X[:, None, :] - shifts) / widths).astype(np.int64) % prime
    h = np.broadcast_to(mult[:, d], (n, P))
    for j in range(d):
        h = (h + cells[:, :, j] * mult[:, j]) % prime
    cols = (h % n_buckets + n_buckets * np.arange(P)).ravel()
    return sp.csr_matrix(
        (np.full(n * P, P**-0.5), cols, np.arange(0, n * P + 1, P)), shape=(n, P * n_buckets)
    )


# (homework, question) -> [(name, stand-in, exact)]: exact stand-ins compute the right answer.
STAND_INS = {
    ("hw1", "q1"): [
        (
            "kernels.is_psd",
            lambda K, tol=1e-10: None if kernels.is_psd(K) else np.linalg.eigh(K)[1][:, 0],
            False,
        )
    ],
    ("hw1", "q2"): [("kernels.Linear of the powers, by Newton's identities", _anova, True)],
    ("hw1", "q3"): [("random sign features (touches kernels)", _sketch_product, True)],
    ("hw2", "q1"): [
        ("leave-one-out from one eigendecomposition (touches kernels)", _loo_and_gcv, True),
        ("ridge.solve_regularized_psd, a refit per point", _loo_refits, False),
    ],
    ("hw2", "q2"): [("k-fold from one eigendecomposition (touches kernels)", _kfold, True)],
    ("hw3", "q1"): [
        (
            "spectral scrambled Halton points",
            lambda n, d, rng: spectral._qmc_uniforms(
                n, d, np.random.RandomState(_seed(rng)), "halton"
            ),
            True,
        )
    ],
    ("hw3", "q2"): [
        ("spectral scrambled Halton points through a Fejér quantile", _fejer_features, True)
    ],
    ("hw4", "q1"): [("duality gap (touches kernels)", _duality_gap, True)],
    ("hw4", "q2"): [("SMO step (touches kernels)", _smo_step, True)],
    ("hw4", "q3"): [("svm.KernelSVC", lambda a, K, y, C: _svc(K, y, C)[1], False)],
    ("hw4", "q4"): [
        (
            "svm.KernelSVC",
            # one step that reads 2n kernel values, or n with shrinking
            lambda K, y, C, tol=1e-5, shrink=True, every=10: (
                _svc(K, y, C)[0],
                (1 if shrink else 2) * len(y),
                1,
            ),
            True,
        )
    ],
    ("hw5", "q1"): [("pivoted Cholesky (touches bounds)", _nystroem_precond, True)],
    ("hw5", "q2"): [("solvers.conjugate_gradient", _pcg_ritz, False)],
    ("hw6", "q1"): [("rational widths (touches kernels)", _rational_widths, True)],
    ("hw6", "q2"): [("hashed binning (touches kernels)", _hashed_binning, True)],
    ("hw7", "q1"): [("scale.StreamingFeatureRidge", _fold_statistics, True)],
    ("hw7", "q2"): [("ridge.solve_regularized_psd", _cv_path, True)],
    ("hw7", "q3"): [("sgd.sgd_approx_features_on_the_fly", _svrg_by_sgd, False)],
    ("hw8", "q1"): [("ridge.solve_regularized_psd", _krr_offset, True)],
    ("hw8", "q2"): [("ridge.solve_regularized_psd", _power, True)],
    ("hw8", "q3"): [("ridge.solve_regularized_psd", _p_greedy, False)],
    ("hw9", "q1"): [("features.RandomKitchenSinks", _cosine_sinks, False)],
    # not exact: the package's solver is not coordinate descent, and its iterations (and the
    # Gram matrix the stand-in forms to report one sweep) cost more than the O(nq) a sweep
    # that the check counts
    ("hw9", "q2"): [("features.fit_box_constrained", _box_least_squares, False)],
    ("hw10", "q1"): [("scale.conjugate_gradient", _walk_cg, True)],
    ("hw10", "q2"): [("scale.conjugate_gradient", _walk_cg_counted, False)],
}


class _NoGuard(_core.PackageGuard):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _passes(fn, check_fn):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            check_fn(fn, seed=0)
        except AssertionError:
            return False, out.getvalue()
    return True, out.getvalue()


def main():
    report = {"package": kernelcourse.__file__, "results": []}
    for (hw, q), stand_ins in STAND_INS.items():
        check_fn = getattr(getattr(check, hw), q)
        for name, fn, exact in stand_ins:
            passed, out = _passes(fn, check_fn)
            entry = {
                "check": f"{hw}.{q}",
                "stand_in": name,
                "passed_with_guard": passed,
                "guard_named_it": "your function calls kernelcourse." in out,
            }
            if exact:
                _core.PackageGuard, saved = _NoGuard, _core.PackageGuard
                try:
                    entry["passed_without_guard"], entry["output"] = _passes(fn, check_fn)
                finally:
                    _core.PackageGuard = saved
            report["results"].append(entry)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
