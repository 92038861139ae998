"""Self-checks for homework 6: random binning features on Covertype.

Random binning (Rahimi & Recht 2007; :doc:`chapter 9 </book/09_nystroem_vs_rff>`): P random grids
with pitches δ ~ Gamma(2, 1/γ)
and shifts u ~ U[0, δ) per axis; z(x) is the one-hot code of the cells x falls in, scaled by
1/√P, so z(x)ᵀz(y) is the fraction of grids in which x and y share a cell, an unbiased estimate
of the Laplacian kernel exp(−γ‖x − y‖₁). The checks test distributions, the sharing property,
optimality conditions of conjugate gradients and, for the whole classifier, accuracy on
held-out Covertype rows (never wall-clock time, which depends on the machine).
:class:`kernelcourse.features.RandomBinningFeatures` and
:class:`kernelcourse.scale.NystroemKRRClassifier` are there to compare with, not to call.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy import stats
from scipy.sparse.linalg import LinearOperator

from ._core import Fingerprint, SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q3", "q4", "MIN_ACCURACY", "covertype_binary"]

#: Test accuracy question 4 asks for: above what linear ridge or a small Nyström model reach.
MIN_ACCURACY = 0.82

# Library routines that would do a question's work in one call.
SOLVERS = (
    "scipy.sparse.linalg._isolve",
    "scipy.sparse.linalg._dsolve",
    "scipy.sparse.linalg._eigen",
    "sklearn",
)

# Z Zᵀ of the features of the fixed input of q2, summarised.
SHARING_FINGERPRINT = Fingerprint((25, 25), [3.871, -2.593, -1.082])


def covertype_binary(*, n_train, n_test, random_state):
    """Covertype with labels +1 for cover type 2 (lodgepole pine) and −1 for the six others."""
    from ...datasets import load_covertype

    data = load_covertype(n_train=n_train, n_test=n_test, random_state=random_state)
    return (
        data.X_train,
        np.where(data.y_train == 2, 1.0, -1.0),
        data.X_test,
        np.where(data.y_test == 2, 1.0, -1.0),
    )


def _fixed_grids():
    fixed = np.random.default_rng(6)
    X = fixed.normal(size=(25, 3))
    pitches = fixed.gamma(2.0, 1.0, size=(8, 3))
    shifts = fixed.uniform(size=(8, 3)) * pitches
    return X, pitches, shifts


def q1(student_binning_grids, *, seed=None):
    """Check ``binning_grids(d, P, gamma, rng)`` → (pitches, shifts), each of shape (P, d)."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw6.q1", student_binning_grids)
    gamma = float(rng.uniform(0.3, 3.0))

    @c.test("returns two arrays of shape (P, d)", "one pitch and one shift per grid and axis.")
    def _():
        pitches, shifts = (np.asarray(a) for a in c.fn(4, 9, 1.0, np.random.default_rng(0)))
        assert pitches.shape == (9, 4), f"pitches have shape {pitches.shape}, expected (9, 4)"
        assert shifts.shape == (9, 4), f"shifts have shape {shifts.shape}, expected (9, 4)"

    @c.test(
        "draws from the generator it is given",
        "draw from the rng argument, not from np.random or a new generator.",
    )
    def _():
        a = c.fn(2, 5, 1.0, np.random.default_rng(3))
        b = c.fn(2, 5, 1.0, np.random.default_rng(3))
        other = c.fn(2, 5, 1.0, np.random.default_rng(4))
        close(np.concatenate(a), np.concatenate(b), rtol=0, atol=0, what="equal seeds")
        assert not np.allclose(a[0], other[0]), "different seeds gave the same pitches"

    @c.test(
        "the pitches follow Gamma(2, scale 1/γ), the density δ k''(δ) of exp(−γδ)",
        "the pitch density is δ k''(δ) for k(δ) = exp(−γδ): which Gamma law is it, and is "
        "its scale γ or 1/γ?",
    )
    def _():
        pitches, _ = c.fn(2, 10000, gamma, rng)
        p = stats.kstest(np.ravel(pitches), stats.gamma(2.0, scale=1.0 / gamma).cdf).pvalue
        assert p > 1e-6, (
            f"Kolmogorov–Smirnov test against Gamma(2, 1/γ = {1 / gamma:.3g}): p = {p:.2g}"
        )

    @c.test(
        "each shift is uniform on [0, δ) for its own pitch δ",
        "draw u = rng.uniform(size=(P, d)) * pitches, so that u/δ ~ U[0, 1).",
    )
    def _():
        pitches, shifts = (np.asarray(a) for a in c.fn(2, 10000, gamma, rng))
        ratio = np.ravel(shifts / pitches)
        assert ratio.min() >= 0 and ratio.max() < 1, "a shift lies outside [0, δ)"
        p = stats.kstest(ratio, stats.uniform().cdf).pvalue
        assert p > 1e-6, f"u/δ is not uniform on [0, 1): Kolmogorov–Smirnov p = {p:.2g}"

    c.finish()


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z, dtype=float)


def q2(student_binning_features, *, seed=None):
    """Check ``binning_features(X, pitches, shifts)``: one-hot cell codes scaled by 1/√P."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw6.q2", student_binning_features)
    hint_cells = (
        "the cell of x in grid p is floor((x − u_p) / δ_p), a vector of d integers; every "
        "distinct occupied cell of every grid is one column, and z(x) has 1/√P in the P "
        "columns of x's cells."
    )

    @c.test(
        "each row has exactly P non-zeros, all equal to 1/√P (so ‖z(x)‖ = 1)",
        "one column per occupied cell of each grid, and a point lies in one cell per grid.",
    )
    def _():
        X = rng.normal(size=(30, 4))
        pitches = rng.gamma(2.0, 1.0, size=(6, 4))
        Z = _dense(c.fn(X, pitches, rng.uniform(size=(6, 4)) * pitches))
        assert Z.shape[0] == 30, f"expected 30 rows, got {Z.shape[0]}"
        close((Z != 0).sum(axis=1), np.full(30, 6), what="non-zeros per row")
        close(Z[Z != 0], np.full(30 * 6, 1 / np.sqrt(6)), what="the non-zero entries")

    @c.test("no empty columns: every column is a cell that holds a point", hint_cells)
    def _():
        X = rng.normal(size=(30, 2))
        pitches = rng.gamma(2.0, 1.0, size=(5, 2))
        Z = _dense(c.fn(X, pitches, rng.uniform(size=(5, 2)) * pitches))
        assert (Z != 0).any(axis=0).all(), "some columns are empty"

    @c.test(
        "z(x)ᵀz(y) is the fraction of grids in which x and y share a cell (fixed input)",
        hint_cells,
    )
    def _():
        X, pitches, shifts = _fixed_grids()
        Z = _dense(c.fn(X, pitches, shifts))
        SHARING_FINGERPRINT.check(Z @ Z.T, what="Z Zᵀ")

    @c.test(
        "the rows follow the points: permuting the rows of X permutes the rows of Z Zᵀ",
        "compute each point's cells from its own coordinates only.",
    )
    def _():
        X = rng.normal(size=(20, 3))
        pitches = rng.gamma(2.0, 1.0, size=(7, 3))
        shifts = rng.uniform(size=(7, 3)) * pitches
        perm = rng.permutation(20)
        Z, Zp = _dense(c.fn(X, pitches, shifts)), _dense(c.fn(X[perm], pitches, shifts))
        close(Zp @ Zp.T, (Z @ Z.T)[np.ix_(perm, perm)], what="Z Zᵀ of the permuted points")

    c.finish()


class _CountingOperator(LinearOperator):
    """Z as a matrix-free operator that counts its products with vectors."""

    def __init__(self, A):
        super().__init__(dtype=np.float64, shape=A.shape)
        self.A = A
        self.products = 0

    def _matvec(self, v):
        self.products += 1
        return self.A @ np.ravel(v)

    def _rmatvec(self, v):
        self.products += 1
        return self.A.T @ np.ravel(v)


def q3(student_ridge_cg, *, seed=None):
    """Check ``ridge_cg(Z, y, lam, n_iter)``: conjugate gradients on (ZᵀZ + λnI) w = Zᵀy."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw6.q3", student_ridge_cg, forbid=SOLVERS)
    n, D, lam = 60, 12, 1e-3

    def problem():
        A = rng.normal(size=(n, D)) @ np.diag(np.linspace(0.2, 2.0, D))
        return A, A @ rng.normal(size=D) + 0.1 * rng.normal(size=n)

    @c.test(
        "with n_iter ≥ D, w solves (ZᵀZ + λnI) w = Zᵀy (the gradient of the objective vanishes)",
        "start from w = 0, r = p = Zᵀy; each iteration needs one product q = ZᵀZp + λn p, then "
        "a = rᵀr / pᵀq, w += a p, r −= a q, p = r + (new rᵀr / old rᵀr) p.",
    )
    def _():
        A, y = problem()
        w = np.asarray(c.fn(_CountingOperator(A), y, lam, 3 * D), dtype=float)
        assert w.shape == (D,), f"w has shape {w.shape}, expected ({D},)"
        grad = A.T @ (A @ w - y) + lam * n * w
        close(grad / np.linalg.norm(A.T @ y), np.zeros(D), atol=1e-8, what="the gradient")

    @c.test(
        "after k steps the residual is orthogonal to the Krylov space span{b, Hb, …, H^(k−1)b}",
        "this is what makes it conjugate gradients: keep the directions p conjugate "
        "(p = r + β p with β = new rᵀr / old rᵀr) and take the exact step a = rᵀr / pᵀHp.",
    )
    def _():
        A, y = problem()
        H = A.T @ A + lam * n * np.eye(D)
        b = A.T @ y
        for k in (1, 3):
            w = np.asarray(c.fn(_CountingOperator(A), y, lam, k), dtype=float)
            krylov = np.stack([np.linalg.matrix_power(H, j) @ b for j in range(k)], axis=1)
            basis, _ = np.linalg.qr(krylov)
            close(
                basis.T @ (b - H @ w) / np.linalg.norm(b),
                np.zeros(k),
                atol=1e-8,
                what=f"the residual against the Krylov space after {k} iteration(s)",
            )
            close(
                basis @ (basis.T @ w),
                w,
                rtol=1e-7,
                atol=1e-10,
                what=f"the part of w outside the Krylov space after {k} iteration(s)",
            )

    @c.test(
        "is matrix-free: about two products with Z per iteration, never ZᵀZ",
        "Z is a scipy LinearOperator here (as a large sparse matrix would be used): apply it "
        "with Z @ v and Z.T @ v; do not form Z.T @ Z.",
    )
    def _():
        A, y = problem()
        Z = _CountingOperator(A)
        c.fn(Z, y, lam, 5)
        assert Z.products <= 2 * 5 + 4, f"{Z.products} products with Z or Zᵀ for 5 iterations"

    c.finish()


def q4(student_classify, *, seed=None):
    """Check ``classify(X_train, y_train, X_test)`` on held-out Covertype rows.

    Loads 30 000 training and 5 000 test rows (labels ±1, cover type 2 against the rest) and
    asks for a test accuracy of at least :data:`MIN_ACCURACY`. ``seed`` picks the rows
    (default: a fixed split other than the notebook's).
    """
    c = SelfCheck("hw6.q4", student_classify, forbid=SOLVERS)
    X_train, y_train, X_test, y_test = covertype_binary(
        n_train=30_000, n_test=5_000, random_state=1 if seed is None else seed
    )
    outcome = {}

    @c.test(
        "returns one ±1 label per test row",
        "time the pieces: binning 35 000 rows with P = 50 grids takes seconds; CG needs only "
        "tens of iterations. The labels are the signs of the scores.",
    )
    def _():
        labels = np.asarray(c.fn(X_train, y_train, X_test), dtype=float)
        assert labels.shape == y_test.shape, f"got shape {labels.shape}, expected {y_test.shape}"
        assert np.isin(labels, (-1.0, 1.0)).all(), "labels must be −1 or +1"
        outcome["accuracy"] = float(np.mean(labels == y_test))

    @c.test(
        f"reaches a test accuracy of at least {MIN_ACCURACY}",
        "a linear model on the raw features stays near 0.76; random binning with γ around "
        "0.5–1, P ≈ 50 grids and a small λ goes well beyond.",
    )
    def _():
        assert "accuracy" in outcome, "no labels to score (see the test above)"
        acc = outcome["accuracy"]
        assert acc >= MIN_ACCURACY, f"test accuracy {acc:.3f} < {MIN_ACCURACY}"

    c.finish()
