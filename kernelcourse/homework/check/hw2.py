"""Self-checks for homework 2: exact leave-one-out and k-fold residuals of kernel ridge for a
whole grid of λ (:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`).

The checks test what defines each answer, not stored values: a leave-one-out residual is the
error of a refit that never saw the point, GCV does not change when the data are rotated and
equals the mean squared leave-one-out residual where every leverage is the same, and a fold's
residuals are those of a refit without the fold. A :class:`FactorisationCounter` counts the
dense factorisations of large matrices, so a function that refits for every λ fails however
fast the machine is.
"""

from __future__ import annotations

import numpy as np

from ...kernels import RBF, Linear
from . import _core
from ._core import SelfCheck, _matches, close, fresh_rng

__all__ = ["q1", "q2", "FactorisationCounter"]

# What else would answer these questions in one call.
SOLVERS = ("sklearn.kernel_ridge", "sklearn.linear_model", "sklearn.model_selection")
# Routines of numpy.linalg and scipy.linalg that cost O(n³) on an n × n matrix.
FACTORISATIONS = frozenset(
    (
        "cho_factor cho_solve cholesky det eig eig_banded eigh eigvals eigvalsh expm funm "
        "hessenberg inv ldl logm lstsq lu lu_factor lu_solve matrix_power pinv pinvh polar qr "
        "schur slogdet solve solve_triangular sqrtm svd svdvals tensorinv tensorsolve"
    ).split()
)
LINALG = ("numpy.linalg", "scipy.linalg")


def _matrix_shape(frame):
    """The shape of the matrix a linear-algebra routine was handed (its first argument)."""
    code = frame.f_code
    if code.co_argcount == 0:
        return None
    value = frame.f_locals.get(code.co_varnames[0])
    if isinstance(value, tuple) and value:  # cho_solve((c, lower), b), lu_solve((lu, piv), b)
        value = value[0]
    shape = getattr(value, "shape", None)
    return tuple(shape[-2:]) if shape is not None and len(shape) >= 2 else None


class FactorisationCounter(_core.ProfileHook):
    """Record each factorisation of a large matrix while a block runs (a profile hook).

    Every outermost call into ``numpy.linalg`` or ``scipy.linalg`` whose name is in
    :data:`FACTORISATIONS` and whose matrix has both sides larger than ``side`` is recorded in
    ``factorisations`` as ``(name, shape)``: the O(n³) steps of a run, counted the same on any
    machine. A profile function already installed (the package guard of a self-check) keeps
    receiving every event.
    """

    def __init__(self, side):
        self.side = side
        self.factorisations = []
        self._depth = 0

    def _event(self, frame, event, arg):
        if event not in ("call", "return"):
            return
        if not _matches(frame.f_globals.get("__name__", "") or "", LINALG):
            return
        if event == "call":
            if self._depth == 0 and frame.f_code.co_name in FACTORISATIONS:
                shape = _matrix_shape(frame)
                if shape is not None and min(shape) > self.side:
                    self.factorisations.append((frame.f_code.co_name, shape))
            self._depth += 1
        elif self._depth:
            self._depth -= 1


class _CountingCheck(SelfCheck):
    def counted(self, side, *args):
        """Call the student's function under the package guard and a counter."""
        counter = FactorisationCounter(side)
        out = self.guarded_call(self.student_fn, args, {}, counter)
        return out, counter.factorisations


def _problem(rng, n, kind="rbf"):
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.sin(X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=n)
    if kind == "linear":  # rank 3: most eigenvalues of K are zero
        return Linear()(X), y
    return RBF(gamma=float(rng.uniform(0.3, 2)))(X), y


def _lams(rng, size):
    return np.sort(10.0 ** rng.uniform(-2, 1, size=size))


def _refit_residuals(K, y, lam, held_out):
    """y_F − f(x_F) for the kernel ridge fit on every point outside F."""
    keep = np.setdiff1d(np.arange(len(y)), held_out)
    alpha = np.linalg.solve(K[np.ix_(keep, keep)] + lam * np.eye(len(keep)), y[keep])
    return y[held_out] - K[np.ix_(held_out, keep)] @ alpha


def _as_pair(out, L, n):
    assert isinstance(out, tuple) and len(out) == 2, "return the pair (E, gcv)"
    E, gcv = np.asarray(out[0], dtype=float), np.asarray(out[1], dtype=float)
    assert E.shape == (L, n), f"E has shape {E.shape}, expected ({L}, {n})"
    assert gcv.shape == (L,), f"gcv has shape {gcv.shape}, expected ({L},)"
    return E, gcv


def q1(student_loo_and_gcv, *, seed=None):
    """Check ``loo_and_gcv(K, y, lams) -> (E, gcv)``: refits, rotations, equal leverages, cost."""
    rng = fresh_rng(seed)
    c = _CountingCheck("hw2.q1", student_loo_and_gcv, forbid=SOLVERS)

    for n, kind in ((25, "rbf"), (30, "linear")):

        @c.test(
            f"each E[j, i] is the error at x_i of a refit without point i ({kind} kernel, n = {n})",
            "the leave-one-out residual is y_i − f₋ᵢ(x_i) for the fit on the other n − 1 "
            "points: the training residual r_i divided by 1 − H_ii, not r_i itself; a "
            "low-rank K has zero eigenvalues, which the formula must survive.",
        )
        def _(n=n, kind=kind):
            K, y = _problem(rng, n, kind)
            lams = _lams(rng, 6)
            E, _ = _as_pair(c.fn(K, y, lams), 6, n)
            scale = np.abs(y).max()
            for i in rng.choice(n, size=5, replace=False):
                for j, lam in enumerate(lams):
                    want = _refit_residuals(K, y, lam, np.array([i]))[0]
                    close(E[j, i] / scale, want / scale, atol=1e-8, what=f"E[{j}, {i}]")

    @c.test(
        "GCV does not change when the data are rotated (K → QKQᵀ, y → Qy, Q orthogonal)",
        "GCV sees H only through the squared norm of the residual (I − H)y and the trace of "
        "H, and both are unchanged by a rotation (leave-one-out residuals are not).",
    )
    def _():
        K, y = _problem(rng, 20)
        lams = _lams(rng, 5)
        Q, _ = np.linalg.qr(rng.normal(size=(20, 20)))
        _, g1 = _as_pair(c.fn(K, y, lams), 5, 20)
        _, g2 = _as_pair(c.fn(Q @ K @ Q.T, Q @ y, lams), 5, 20)
        close(g2, g1, rtol=1e-6, atol=1e-10, what="GCV of the rotated data")

    @c.test(
        "GCV equals the mean squared leave-one-out residual when every H_ii is the same "
        "(equally spaced points on a circle)",
        "GCV replaces each 1 − H_ii by their mean, 1 − tr(H)/n, and averages the squares of "
        "the residuals so divided (a mean, not a sum or a root).",
    )
    def _():
        n = 24
        theta = 2 * np.pi * np.arange(n) / n + float(rng.uniform(0, 1))
        X = np.column_stack([np.cos(theta), np.sin(theta)])
        K = RBF(gamma=float(rng.uniform(0.5, 3)))(X)  # circulant: every H_ii is equal
        y = rng.normal(size=n)
        lams = _lams(rng, 4)
        _, gcv = _as_pair(c.fn(K, y, lams), 4, n)
        loo = [
            np.mean([_refit_residuals(K, y, lam, np.array([i]))[0] ** 2 for i in range(n)])
            for lam in lams
        ]
        close(gcv, np.array(loo), rtol=1e-6, atol=1e-12, what="GCV")

    @c.test(
        "one decomposition serves the whole grid: at most 2 factorisations of an n × n "
        "matrix for 30 values of λ",
        "H(λ) = K(K + λI)⁻¹ has the eigenvectors of K for every λ: decompose K once, and each "
        "λ only reweights the eigenvalues (O(n²) per λ, no new factorisation).",
    )
    def _():
        K, y = _problem(rng, 40)
        lams = _lams(rng, 30)
        out, factorisations = c.counted(20, K, y, lams)
        _as_pair(out, 30, 40)
        assert len(factorisations) <= 2, (
            f"{len(factorisations)} factorisations of a large matrix for 30 values of λ"
        )

    c.finish()


def _folds(rng, n, k):
    """k folds of unequal sizes that partition range(n), in random order."""
    cuts = np.sort(rng.choice(np.arange(2, n - 1), size=k - 1, replace=False))
    while np.any(np.diff(np.r_[0, cuts, n]) < 2):
        cuts = np.sort(rng.choice(np.arange(2, n - 1), size=k - 1, replace=False))
    return np.split(rng.permutation(n), cuts)


def _as_matrix(out, L, n):
    E = np.asarray(out, dtype=float)
    assert E.shape == (L, n), f"E has shape {E.shape}, expected ({L}, {n})"
    return E


def q2(student_kfold_residuals, *, seed=None):
    """Check ``kfold_residuals(K, y, lams, folds) -> E``: refits without each fold, the order
    of points and folds, and the number of large factorisations."""
    rng = fresh_rng(seed)
    c = _CountingCheck("hw2.q2", student_kfold_residuals, forbid=SOLVERS)

    for n, k, kind in ((30, 4, "rbf"), (36, 3, "linear")):

        @c.test(
            f"the residuals of every fold are those of a refit without the fold ({kind} "
            f"kernel, n = {n}, {k} folds)",
            "deleting a fold F changes the predictions on F by (I − H_FF)⁻¹ applied to the "
            "training residuals on F: H_FF is the whole F × F block of H, not its diagonal.",
        )
        def _(n=n, k=k, kind=kind):
            K, y = _problem(rng, n, kind)
            lams = _lams(rng, 4)
            folds = _folds(rng, n, k)
            E = _as_matrix(c.fn(K, y, lams, folds), 4, n)
            scale = np.abs(y).max()
            for j, lam in enumerate(lams):
                for fold in folds:
                    want = _refit_residuals(K, y, lam, fold)
                    close(E[j, fold] / scale, want / scale, atol=1e-8, what=f"E[{j}] on a fold")

    @c.test(
        "relabelling the points and reordering the folds relabels the residuals",
        "E[j, i] belongs to point i wherever its fold is listed: write each fold's residuals "
        "back to the positions of its own points.",
    )
    def _():
        n = 24
        K, y = _problem(rng, n)
        lams = _lams(rng, 3)
        folds = _folds(rng, n, 4)
        E = _as_matrix(c.fn(K, y, lams, folds), 3, n)
        p = rng.permutation(n)  # new point a is old point p[a]
        where = np.argsort(p)
        moved = [where[f] for f in folds[::-1]]
        E2 = _as_matrix(c.fn(K[np.ix_(p, p)], y[p], lams, moved), 3, n)
        close(E2, E[:, p], rtol=1e-7, atol=1e-9, what="the relabelled residuals")

    @c.test(
        "one decomposition serves every λ and every fold: at most 2 factorisations of a "
        "matrix larger than a fold for 20 values of λ and 5 folds",
        "decompose K once; for each λ and fold only a |F| × |F| system is left, built from "
        "the rows of the eigenvectors that belong to F.",
    )
    def _():
        K, y = _problem(rng, 50)
        lams = _lams(rng, 20)
        folds = np.array_split(rng.permutation(50), 5)
        out, factorisations = c.counted(10, K, y, lams, folds)
        _as_matrix(out, 20, 50)
        assert len(factorisations) <= 2, (
            f"{len(factorisations)} factorisations of a large matrix for 20 values of λ and 5 folds"
        )

    c.finish()
