r"""Ridge regression in the primal, kernel ridge regression in the dual, and ridge on features.

:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>` derives ridge regression (Hoerl and Kennard, 1970)
as the MAP estimate of the weights under the likelihood
:math:`\mathbf y \sim \mathcal N(\mathbf X \mathbf w, \sigma^2 \mathbf I)` and the prior
:math:`\mathbf w \sim \mathcal N(0, \lambda^{-1} \mathbf I)`; with σ² absorbed into λ,

.. math:: \mathbf w = (\lambda \mathbf I_d + \mathbf X^T \mathbf X)^{-1} \mathbf X^T \mathbf y,

a d × d solve costing :math:`O(d^3 + d^2 n)` (:class:`RidgeRegression`, :class:`FeatureRidge`
on features Φ). The push-through identity
:math:`(\lambda \mathbf I_D + \mathbf\Phi^T \mathbf\Phi)^{-1} \mathbf\Phi^T
= \mathbf\Phi^T (\lambda \mathbf I_n + \mathbf\Phi \mathbf\Phi^T)^{-1}` turns it into the dual

.. math:: \alpha = (\mathbf K + \lambda \mathbf I_n)^{-1} \mathbf y, \qquad
          f(x) = \sum_i \alpha_i K(x_i, x),

an n × n solve costing :math:`O(n^3)` that only needs the kernel (:class:`KernelRidge`;
the same solution is as the minimizer of the penalized empirical risk).
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _array_api, devices, solvers
from ._array_api import namespace_of
from ._progress import Progress
from ._threads import single_blas_thread
from ._validation import (
    ClassifierScoreMixin,
    RegressorScoreMixin,
    all_finite,
    cast_for_kernel,
    cast_to,
    check_bool,
    check_class_totals,
    check_count,
    check_fit_input,
    check_labels,
    check_memory,
    check_nonnegative,
    check_positive,
    check_weights,
    count_constraint,
    find_stack_level,
    finite_gram,
    finite_values,
    gamma_constraint,
    kernel_params_of,
    one_vs_rest_targets,
    real_constraint,
    refuse_complex_features,
    validate_data,
)
from .kernels import KERNEL_NAMES, Kernel, resolve_kernel
from .rkhs import RKHSFunction

__all__ = [
    "RidgeRegression",
    "KernelRidge",
    "FeatureRidge",
    "FeatureRidgeClassifier",
    "solve_regularized_psd",
    "sparse_ridge_cg",
]

# Below this size a threaded Cholesky gains little, and on a busy machine its threads can wait
# on each other for far longer than the factorization takes; factor with one BLAS thread.
_SINGLE_THREAD_MAX_N = 512


def _cho_factor(M):
    if M.shape[0] <= _SINGLE_THREAD_MAX_N:
        with single_blas_thread():
            return linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    return linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)


def _check_lam_fits(lam, float32):
    """Raise if λ is beyond the range of float32 when K + λI is solved in it: the diagonal
    became infinite, and Cholesky returned α = 0 (numpy) or the eigensolver of the fallback
    did not converge (array-API input)."""
    top = float(np.finfo(np.float32).max)
    if float32 and float(lam) > top:
        raise ValueError(
            f"lam = {float(lam):.3g} is beyond the range of float32 (largest {top:.3g}), the "
            "dtype of K + λI; use a smaller lam or dtype=numpy.float64."
        )


def _check_finite(A, name, block=1024):
    """Raise if A holds NaN or infinity, checked in blocks of rows (no n × n temporary).
    Both triangles: the factorization reads one, and a NaN in the other would go unseen."""
    for start in range(0, A.shape[0], block):
        if not np.isfinite(A[start : start + block]).all():
            raise ValueError(
                f"A ({name}) contains NaN or infinity; a kernel or Gram matrix must be "
                "finite. Check the inputs and the kernel."
            )


def _check_symmetric(A, name, block=1024):
    """Raise if A is not symmetric to round-off, compared in blocks of rows (no n × n
    temporary). The factorization reads one triangle only: a non-symmetric A was silently
    solved as the symmetric matrix of that triangle."""
    # round-off of a Gram matrix formed by a general product (not syrk) is far below this
    rtol = 1e-8 if A.dtype == np.float64 else 1e-4
    diff = scale = 0.0
    for start in range(0, A.shape[0], block):
        rows = A[start : start + block]
        diff = max(diff, float(np.abs(rows - A[:, start : start + block].T).max()))
        scale = max(scale, float(np.abs(rows).max()))
    if diff > rtol * scale:
        raise ValueError(
            f"A ({name}) is not symmetric: |A_ij − A_ji| reaches {diff:.3g} (largest entry "
            f"{scale:.3g}); the Cholesky solve needs a symmetric positive semidefinite matrix "
            "(pass (A + A.T) / 2 if that is what you meant)."
        )


def _warn_if_inaccurate(factor, a_diag, lam, x, b, name):
    r"""Warn when a Cholesky solve may be inaccurate, at O(n) cost in the usual case.

    * :math:`(\max_i L_{ii} / \min_i L_{ii})^2`, a lower bound on the condition number of
      :math:`A + \lambda I`, beyond 1/ε: no digit of x can be trusted (e.g. collinear columns
      with λ = 0).
    * the relative residual :math:`\|(A + \lambda I)x - b\| / \|b\|` above 1e-6 (float64)
      or 1e-3 (float32). Cholesky is backward stable, so the residual is at most about
      :math:`n\varepsilon\,\|A + \lambda I\|\,\|x\| / \|b\|` with
      :math:`\|A + \lambda I\| \le \operatorname{tr}(A) + n\lambda` for PSD A; only when
      that bound exceeds the limit is the residual measured (one O(n²) product).
    """
    c = factor[0]
    n = c.shape[0]
    eps = float(np.finfo(c.dtype).eps)
    limit = 1e-6 if c.dtype == np.float64 else 1e-3
    pivots = np.abs(c.diagonal()).astype(np.float64)
    cond_low = (pivots.max() / pivots.min()) ** 2 if pivots.min() > 0 else np.inf
    X, B = x.reshape(n, -1), b.reshape(n, -1)
    bn = solvers._scaled_colnorm(B)
    growth = float(np.max(solvers._scaled_colnorm(X) / np.where(bn > 0, bn, 1.0)))
    bound = n * eps * (float(a_diag.astype(np.float64).sum()) + n * lam) * growth
    residual = _relative_residual(factor, a_diag, lam, x, b) if bound > limit else None
    if cond_low * eps > 1 or (residual is not None and not residual <= limit):
        measured = (
            f"relative residual ‖({name} + λI)x − b‖/‖b‖ = {residual:.3g}"
            if residual is not None
            else "a residual below its bound"
        )
        warnings.warn(
            f"{name} + λI is ill-conditioned: condition number >= {cond_low:.3g} (from the "
            f"Cholesky pivots) and {measured}; the solution may be inaccurate. Increase lam "
            "(or, for collinear columns, remove them).",
            linalg.LinAlgWarning,
            stacklevel=find_stack_level(),
        )


def _relative_residual(factor, a_diag, lam, x, b):
    r"""Relative residual :math:`\max_j \|(A + \lambda I)x_j - b_j\| / \|b_j\|` of a Cholesky
    solve, from the factor's memory: LAPACK left the other triangle of A untouched, so A's
    diagonal is swapped in for one symmetric product and the factor's diagonal swapped back."""
    c, lower = factor
    X = x.reshape(len(x), -1)
    B = b.reshape(len(b), -1)
    l_diag = c.diagonal().copy()
    np.fill_diagonal(c, a_diag + lam)
    try:
        symm = linalg.get_blas_funcs("symm", (c, X))
        AX = symm(1.0, c, np.asarray(X, dtype=c.dtype, order="F"), lower=int(not lower))
    finally:
        np.fill_diagonal(c, l_diag)
    r = solvers._scaled_colnorm(AX - B)
    bn = solvers._scaled_colnorm(B)
    return float(np.max(r / np.where(bn > 0, bn, 1.0)))


def solve_regularized_psd(A, b, lam, *, overwrite_a=False, name="K"):
    r"""Solve :math:`(\mathbf A + \lambda \mathbf I) x = b` for symmetric PSD A by Cholesky.

    With ``overwrite_a=True`` the factorization happens in A's own memory (A is destroyed), so
    no second n × n array is allocated. When :math:`\mathbf A + \lambda \mathbf I` is not
    numerically positive definite (λ = 0 and A singular, or A not PSD) it warns with the
    smallest eigenvalue and condition number and returns the least-squares solution instead.

    Numerical trouble warns (:class:`scipy.linalg.LinAlgWarning`), naming the quantity: a
    condition number beyond 1/ε (a lower bound from the Cholesky pivots; e.g. collinear
    columns with λ = 0), or a relative residual :math:`\|(\mathbf A + \lambda I)x - b\| /
    \|b\|` above :math:`10^{-6}` (float64) or :math:`10^{-3}` (float32), measured whenever
    the backward-error bound of Cholesky allows that much (see :func:`_warn_if_inaccurate`).

    Parameters
    ----------
    A : array of shape (n, n)
        Symmetric positive semidefinite and finite (only one triangle is read by the
        factorization, so both are checked for NaN and infinity, and against each other to
        round-off, first).
    b : array of shape (n,) or (n, k), k >= 1
    lam : float >= 0
        The ridge λ added to the diagonal.
    overwrite_a : bool
        Factor in place.
    name : str
        Name of A in the warnings and errors.

    Raises
    ------
    ValueError
        If A is not square, not finite or not symmetric (beyond a relative 1e-8, 1e-4 in
        float32), b does not match it or is not finite, or λ is negative or not finite.
    TypeError
        If ``overwrite_a`` is not True or False.
    """
    # overwrite_a="False" is truthy: the caller's matrix was destroyed, silently
    overwrite_a = check_bool(overwrite_a, "overwrite_a")
    return _solve_regularized_psd(A, b, lam, overwrite_a=overwrite_a, name=name)


def _solve_regularized_psd(A, b, lam, *, overwrite_a=False, name="K", check_finite=True):
    """:func:`solve_regularized_psd`; ``check_finite=False`` skips the checks of A (finite,
    symmetric) when the caller has made them (a Gram matrix from
    :func:`~kernelcourse._validation.finite_gram`)."""
    lam = check_nonnegative(lam, "lam")
    if not isinstance(A, np.ndarray) or A.dtype not in (np.float32, np.float64):
        if np.iscomplexobj(A) or np.asarray(A).dtype.kind not in "biuf":
            raise TypeError(
                f"A ({name}) must be a real numeric matrix, got dtype {np.asarray(A).dtype}."
            )
        original = A  # untouched: the least-squares fallback reads it
        A = np.array(A, dtype=np.float64)
        overwrite_a = True  # already a private copy
    else:
        original = None
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(f"A ({name}) must be a non-empty square matrix, got shape {A.shape}.")
    b = np.asarray(b)
    if b.dtype == object or not np.issubdtype(b.dtype, np.number) or np.iscomplexobj(b):
        raise TypeError(f"b must be a real numeric array, got dtype {b.dtype}.")
    n = A.shape[0]
    if b.ndim not in (1, 2) or b.shape[0] != n or b.size == 0:
        raise ValueError(
            f"b must have shape ({n},) or ({n}, k) with k >= 1 to match A ({name}), got shape "
            f"{b.shape}."
        )
    if not np.isfinite(b).all():
        raise ValueError("b contains NaN or infinity.")
    if check_finite:
        _check_finite(A, name)
        _check_symmetric(A, name)
    a_diag = A.diagonal().copy()
    with np.errstate(over="ignore"):  # refused below, by name
        shifted = a_diag + np.asarray(lam).astype(A.dtype)
    # An infinite pivot made Cholesky return x = 0 with numpy's overflow warnings only (λ =
    # 1e39 in float32, or a diagonal near the float range plus λ). A NaN or infinity already
    # in an unchecked Gram matrix is the caller's to name.
    if np.isfinite(a_diag).all() and not np.isfinite(shifted).all():
        raise ValueError(
            f"the diagonal of {name} + λI overflows {A.dtype.name}: λ = {lam:.3g} and the "
            f"largest diagonal entry of {name} is {float(np.abs(a_diag).max()):.3g}; use a "
            f"smaller lam{' or dtype=float64' if A.dtype == np.float32 else ''}, or rescale."
        )
    overwrite_a = overwrite_a and A.flags.writeable  # a read-only A is factored in a copy
    # A converted from integers, a list or float16 is a private copy: the caller's matrix,
    # not overwritten, backs the fallback (it raised "was overwritten; refit with
    # overwrite_a=False" to a caller who had passed overwrite_a=False)
    if original is not None:
        backup = original
    elif overwrite_a:
        backup = None  # nothing left to fall back on once M is factored in place
    else:
        backup = A
    M = A if overwrite_a else A.copy()
    M.flat[:: n + 1] += lam
    if M.flags.c_contiguous and not M.flags.f_contiguous:
        # LAPACK wants column-major memory; the transpose of a symmetric matrix is the same
        # matrix, so hand over the column-major view instead of letting scipy copy.
        M = M.T
    try:
        factor = _cho_factor(M)
        x = linalg.cho_solve(factor, b, overwrite_b=False, check_finite=False)
    except linalg.LinAlgError:
        factor = None
    if factor is not None:
        if np.isfinite(x).all():
            _warn_if_inaccurate(factor, a_diag, lam, x, b, name)
        elif check_finite:  # a finite A, yet x overflows: say so (unchecked callers look)
            warnings.warn(
                f"the solution of ({name} + λI)x = b overflows to infinity or NaN; {name} + λI "
                "is singular to working precision. Increase lam.",
                linalg.LinAlgWarning,
                stacklevel=find_stack_level(),
            )
        return x
    if backup is None:
        raise linalg.LinAlgError(
            f"{name} + λI is not positive definite and was overwritten; refit with "
            "overwrite_a=False to use the least-squares fallback."
        ) from None
    backup = np.asarray(backup)  # (a nested list, when A was given as one)
    _check_finite(backup, name)  # LAPACK's eigensolver may never return on NaN or infinity
    M = backup.astype(np.float64, copy=True)
    M.flat[:: n + 1] += lam
    eigvals = linalg.eigvalsh(M, check_finite=False)
    top = float(np.abs(eigvals).max())
    low = float(eigvals[0])
    cond = np.inf if low <= 0 else top / low
    warnings.warn(
        f"{name} + λI is not numerically positive definite (smallest eigenvalue {low:.3g}, "
        f"largest {top:.3g}, condition number {cond:.3g}); Cholesky failed, so the "
        "least-squares solution is used. Increase lam or check the kernel.",
        linalg.LinAlgWarning,
        stacklevel=find_stack_level(),
    )
    sol = linalg.lstsq(M, b, check_finite=False)[0]
    return sol.astype(A.dtype, copy=False)


def _centre(A, sw, name, mean=None):
    """The weighted column means of A (``mean`` when the caller has them) and A minus them,
    or a ValueError naming ``name`` when the centred entries overflow. The sum behind a mean
    overflows for entries near the float range (y of 1e308) or weights of 1e300, although
    the mean does not: then it is taken again with the weights and each column divided by
    their largest magnitude."""
    with np.errstate(over="ignore", invalid="ignore"):
        if mean is None:
            mean = np.average(A, axis=0, weights=sw)
        if not np.isfinite(mean).all():
            top = np.abs(A).max(axis=0)
            top = np.where(top > 0, top, 1.0)
            w = None if sw is None else sw / sw.max()
            mean = np.average(A / top, axis=0, weights=w) * top
        centred = A - mean
    if not np.isfinite(centred).all():
        raise ValueError(
            f"{name} minus its (weighted) mean overflows floating point: {name} spans more "
            f"than the float range (largest |entry| {float(np.abs(A).max()):.3g}); rescale "
            f"{name}."
        )
    return mean, centred


def _ridge_solve(X, y, lam, sw, fit_intercept, name="X"):
    r"""w (d,) or (d, k) and b of weighted ridge regression, in the better-conditioned form.

    Centre with the weighted means (the intercept is not penalised), scale the rows by
    :math:`\sqrt{s_i}`, then solve the primal :math:`(X^TX + \lambda I)w = X^Ty` (d × d) when
    d <= n, and otherwise the dual :math:`(XX^T + \lambda I)\alpha = y`, :math:`w = X^T\alpha`
    (n × n, the push-through identity, :doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`). With d >
    n, :math:`X^TX` has rank at most n and :math:`X^TX + \lambda I` a condition number of order
    :math:`\|X\|^2/\lambda`, so the primal loses every digit as λ → 0; the dual does not.
    """
    n, d = X.shape
    if fit_intercept:
        x_mean, Xc = _centre(X, sw, name)
        y_mean, yc = _centre(y, sw, "y")
    else:
        x_mean, y_mean = np.zeros(d), np.zeros(y.shape[1:])
        Xc, yc = X, y
    root = None
    if sw is not None:
        root = np.sqrt(sw)
        Xc = Xc * root[:, None]
        yc = yc * (root if yc.ndim == 1 else root[:, None])
    with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
        G = Xc.T @ Xc if d <= n else Xc @ Xc.T
    if not np.isfinite(G).all():
        # else solve_regularized_psd's message spoke of a kernel and named A
        product = f"{name}ᵀ{name}" if d <= n else f"{name}{name}ᵀ"
        raise ValueError(
            f"{product} overflows floating point: {name} is too large in magnitude (largest "
            f"|entry| {float(np.abs(Xc).max()):.3g}, after centring and weighting); rescale "
            f"{name}."
        )
    if d <= n:
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
            rhs = Xc.T @ yc
        if not np.isfinite(rhs).all():
            raise ValueError(
                f"{name}ᵀy overflows floating point: {name} and y are too large in magnitude "
                f"together (largest |entries| {float(np.abs(Xc).max()):.3g} and "
                f"{float(np.abs(yc).max()):.3g}, after centring and weighting); rescale "
                f"{name} or y."
            )
        w = solve_regularized_psd(G, rhs, lam, name=f"{name}ᵀ{name}")
    else:
        K = G
        if fit_intercept:
            # Centring puts u = √s (the ones vector without weights) in the null space of
            # XXᵀ, and y is orthogonal to it; adding c·uuᵀ/‖u‖² leaves α unchanged and removes
            # the near-zero eigenvalue λ that would otherwise ruin the factorization.
            u = np.ones(n) if root is None else root
            K += (np.trace(K) / n + 1.0) / (u @ u) * np.outer(u, u)
        alpha = solve_regularized_psd(K, yc, lam, name=f"{name}{name}ᵀ")
        w = Xc.T @ alpha
    return w, y_mean - x_mean @ w


#: the most bytes one (D, k) array of sparse_ridge_cg's CG state may take
_CG_GROUP_BYTES = 2**24


def sparse_ridge_cg(
    Z,
    Y,
    lam,
    *,
    fit_intercept=False,
    tol=1e-4,
    max_iter=200,
    warn=True,
    sample_weight=None,
    callback=None,
):
    r"""Ridge on sparse features by block-Jacobi-preconditioned conjugate gradients.

    Solves :math:`(\mathbf Z^T \mathbf Z + \lambda \mathbf I)\,\mathbf w = \mathbf Z^T
    \mathbf y` (the ridge normal equations, with an optional unpenalized intercept b)
    touching Z only through the products :math:`\mathbf Z v` and :math:`\mathbf Z^T r`, each
    :math:`O(\mathrm{nnz}(\mathbf Z))`.

    **Why block Jacobi is cheap and exact for random binning features** (Rahimi & Recht 2007;
    :doc:`chapter 9 </book/09_nystroem_vs_rff>`). The columns of
    :math:`\mathbf Z = P^{-1/2}[\mathbf Z_1, \dots, \mathbf Z_P]` fall into one block per grid, and
    each row of a block :math:`\mathbf Z_p` holds a single one: the cell of grid p the point falls
    in. Two different cells of one grid never share a point, so the columns of :math:`\mathbf Z_p`
    are orthogonal and

    .. math:: \mathbf Z_p^T \mathbf Z_p = \tfrac1P \operatorname{diag}(n_{p1}, \dots,
              n_{pB_p}),

    the numbers of training points per cell. The block-diagonal part of the system matrix,
    :math:`\mathbf M = \operatorname{blockdiag}_p(\mathbf Z_p^T \mathbf Z_p) + \lambda
    \mathbf I`, is therefore *diagonal*: its exact inverse is :math:`D` divisions, and it
    equals :math:`\operatorname{diag}(\mathbf Z^T \mathbf Z) + \lambda \mathbf I`, the column
    sums of squares. Conjugate gradients on :math:`\mathbf A = \mathbf Z^T \mathbf Z + \lambda
    \mathbf I` preconditioned by :math:`\mathbf M` (with :math:`\mathbf z_k = \mathbf M^{-1}
    \mathbf r_k` in the usual recursion) converges like :math:`\sqrt{\kappa(\mathbf
    M^{-1/2} \mathbf A \mathbf M^{-1/2})}`. Write :math:`\mathbf Q_p = \mathbf Z_p
    \mathbf M_p^{-1/2}`; with λ = 0 its columns are orthonormal, so :math:`\mathbf Q_p
    \mathbf Q_p^T` is the orthogonal projection onto "functions constant on the cells of grid
    p" and :math:`\mathbf M^{-1/2} \mathbf Z^T \mathbf Z \mathbf M^{-1/2}` has the eigenvalues
    of :math:`\sum_p \mathbf Q_p \mathbf Q_p^T`, a sum of P projections: all lie in [0, P],
    whatever the cell counts. The preconditioner thus removes the spread of the cell counts
    (from 1 to thousands of points), which is what makes unpreconditioned CG or LSQR slow; what
    is left is the overlap between grids, and a few tens of iterations reach the accuracy
    that matters for prediction. One iteration costs one pass over the nnz = nP entries.

    The same preconditioner is the Jacobi (diagonal) one for any sparse Z, so the function
    accepts any sparse matrix; for random binning features it is exact block Jacobi.

    **The intercept** is not penalized, so it is eliminated exactly: with the weighted means
    :math:`\bar z = \mathbf Z^T s / \sum s` and :math:`\bar y`, CG solves
    :math:`(\mathbf Z_c^T \mathbf S \mathbf Z_c + \lambda \mathbf I)\mathbf w =
    \mathbf Z_c^T \mathbf S (\mathbf y - \bar y)` for the centred
    :math:`\mathbf Z_c = \mathbf Z - \mathbf 1 \bar z^T`, which is never formed
    (:math:`\mathbf Z_c v = \mathbf Z v - \mathbf 1 \bar z^T v` and
    :math:`\mathbf Z_c^T u = \mathbf Z^T (u - s\,\mathbf 1^T u / \sum s)`), and
    :math:`b = \bar y - \bar z^T \mathbf w`. Non-negative features (binning features, whose
    columns in each grid sum to :math:`P^{-1/2}\mathbf 1`) are nearly collinear with the ones
    column; kept as a coordinate of its own, the intercept made the preconditioned system
    ill-conditioned, CG slower, and its stopping iterate sensitive to round-off (integer
    weights and repeated rows, the same system, stopped 1e-7 apart at tol = 1e-4). The
    preconditioner is then the diagonal of the centred system,
    :math:`\operatorname{diag}(\mathbf Z^T \mathbf S \mathbf Z) - (\textstyle\sum s)\,
    \bar z^2 + \lambda`.

    Parameters
    ----------
    Z : sparse matrix of shape (n, D) or :class:`~kernelcourse.features.BinCodes`
        BinCodes (from ``RandomBinningFeatures.fit_transform_codes``) hold binning features as
        cell indices and multiply with compiled loops on all cores.
    Y : ndarray of shape (n,) or (n, k)
        Targets. The k columns are independent CG recursions, solved together (one pass over
        Z per iteration serves them all) while D is small; with binning features D can exceed
        10⁷, and then one at a time, which keeps the memory of a single target.
    lam : float > 0
        The ridge λ (penalty :math:`\lambda \|\mathbf w\|^2`; the intercept is not penalized).
    fit_intercept : bool, default=False
        Add an unpenalized intercept b, eliminated by centring (above).
    tol : float > 0, default=1e-4
        Stop when every relative residual :math:`\|\mathbf Z^T \mathbf y - \mathbf A
        \mathbf w\| / \|\mathbf Z^T \mathbf y\|` is at most tol (with an intercept, of
        the centred system).
    max_iter : int >= 1, default=200
    warn : bool, default=True
        Warn (``ConvergenceWarning``, naming the residual) when tol is not reached.
    sample_weight : array-like of shape (n,), optional
        Non-negative weights :math:`s_i` on the squared errors: solves
        :math:`(\mathbf Z^T \mathbf S \mathbf Z + \lambda \mathbf I)\mathbf w =
        \mathbf Z^T \mathbf S \mathbf y` with :math:`\mathbf S = \operatorname{diag}(s)`
        (with an intercept, weighted means centre Z and y). Without an intercept the
        preconditioner stays the exact diagonal: the weighted cell counts
        :math:`\sum_{i \in \text{cell}} s_i / P`.
    callback : callable or None
        Called as ``callback(iteration, relative_residual)`` after every CG iteration.

    Returns
    -------
    W : ndarray of shape (D,) or (D, k)
    b : float or ndarray of shape (k,)
        The intercept (0 without ``fit_intercept``).
    history : ndarray
        The largest relative residual after each iteration, starting with 1 at w = 0.

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS 2007
    (random binning features). Y. Saad, *Iterative Methods for Sparse Linear Systems*, 2nd
    ed. (2003), §§ 9.2 and 10.2 (preconditioned CG, block-Jacobi preconditioners).
    The ridge normal equations: :doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`; random binning:
    :doc:`chapter 9 </book/09_nystroem_vs_rff>`.
    """
    if not (sp.issparse(Z) or hasattr(Z, "rmatvec")):
        raise TypeError(f"Z must be a scipy.sparse matrix or BinCodes, got {type(Z).__name__}.")
    # bools are not numbers here, and tol=inf would stop CG before its first step (w = 0)
    lam = check_positive(lam, "lam")
    max_iter = check_count(max_iter, "max_iter")
    tol = check_positive(tol, "tol")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be None or callable, got {callback!r}.")
    # fit_intercept="False" is truthy: an intercept was fitted, silently
    fit_intercept = check_bool(fit_intercept, "fit_intercept")
    warn = check_bool(warn, "warn")
    Y = np.asarray(Y)
    if Y.dtype.kind not in "biuf":
        raise TypeError(f"Y must be a real numeric array, got dtype {Y.dtype}.")
    n, D = Z.shape
    if n == 0 or D == 0:
        raise ValueError(f"Z has shape {Z.shape}; it needs at least one row and one column.")
    if Y.ndim not in (1, 2) or len(Y) != n:
        raise ValueError(f"Y has shape {Y.shape} but Z has {n} rows; Y must be (n,) or (n, k).")
    if Y.ndim == 2 and Y.shape[1] == 0:
        raise ValueError(f"Y has shape {Y.shape}: it needs at least one column of targets.")
    Y = Y.astype(np.float64, copy=False)
    vector = Y.ndim == 1
    Y = Y[:, None] if vector else Y
    # NaN in Y or Z would come back as NaN weights and residuals, with no error
    if not np.isfinite(Y).all():
        raise ValueError("Y contains NaN or infinity; remove or impute those entries.")
    if sp.issparse(Z) and Z.dtype.kind not in "biuf":
        raise TypeError(f"Z must hold real numbers, got dtype {Z.dtype}.")
    sw = check_weights(sample_weight, np.empty((n, 0)))
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, dtype=np.float64)
        if not np.isfinite(Z.data).all():
            raise ValueError("Z contains NaN or infinity; remove or impute those entries.")
        Zt = Z.T.tocsr()  # Zᵀr as a row-major product: faster than a transposed CSR product
        with np.errstate(over="ignore"):  # an overflow is refused below, by name
            Zsq = Z.multiply(Z)
            col_sq = np.asarray(Zsq.sum(axis=0)).ravel() if sw is None else Zsq.T @ sw

        def rmatvec(R, out=None):
            return Zt @ R if out is None else np.add(out, Zt @ R, out=out)

    else:  # BinCodes: the cell index of each point in each grid
        rmatvec, col_sq = Z.rmatvec, Z.column_sq_norms(sw)

    def weighted(R):  # S r
        return R if sw is None else R * sw[:, None]

    if fit_intercept:  # the weighted column means z̄ of Z, for the centred Z_c = Z − 1z̄ᵀ
        s = np.ones((n, 1)) if sw is None else sw[:, None]
        total = float(s.sum())
        z_mean = rmatvec(s)[:, 0] / total

    def centre_rows(R):  # u − s·1ᵀu/Σs in place, so that Zᵀ of it is Z_cᵀu
        R -= s * (R.sum(axis=0) / total)
        return R

    def A(V):  # (Z_cᵀSZ_c + λI) v, with Z_c = Z without an intercept
        if not fit_intercept:
            return rmatvec(weighted(Z @ V), out=lam * V)
        R = Z @ V
        R -= z_mean @ V
        return rmatvec(centre_rows(weighted(R)), out=lam * V)

    # M = blockdiag(Z_pᵀSZ_p) + λI = diag(ZᵀSZ) + λI; centred, diag(Z_cᵀSZ_c) is
    # diag(ZᵀSZ) − (Σs) z̄², a sum of squares that cancellation may leave just below 0
    with np.errstate(over="ignore", invalid="ignore"):  # the error below says what overflowed
        diag = col_sq + lam
        if fit_intercept:
            diag = np.maximum(col_sq - total * z_mean**2, 0.0) + lam
        # ‖ZᵀSZ‖ is at most the sum of the column sums: CG's products stay finite below it
        finite = np.isfinite(diag).all() and np.isfinite(col_sq.sum())
    if not finite:
        big = float(abs(Z).max()) if sp.issparse(Z) else 1.0
        raise ValueError(
            f"Z is too large in magnitude (largest |entry| {big:.3g}): the sums of squares of "
            "its columns (weighted by sample_weight) overflow floating point; rescale Z or "
            "sample_weight."
        )
    # With an intercept Y is centred with its weighted mean ȳ as Z is (b = ȳ − z̄ᵀw), so
    # CG's relative residual is measured against the part of Y that w must explain (targets
    # of 1e9 ± 1 otherwise stop with w wrong in the second digit).
    y_mean = np.zeros(Y.shape[1])
    if fit_intercept:
        with np.errstate(over="ignore", invalid="ignore"):  # _centre redoes an overflow
            y_mean = Y.mean(axis=0) if sw is None else sw @ Y / sw.sum()
        y_mean, Y = _centre(Y, sw, "Y", y_mean)
    SY = weighted(Y)
    # The columns are independent recursions. Together they share each pass over Z, but CG
    # keeps about eight (D, k) arrays, and numpy's column-wise updates of a narrow row-major
    # (D, k) array run several times slower than on one column. So the columns go in groups
    # that keep each array under _CG_GROUP_BYTES: all k together when D is small, one at a
    # time when binning features give D ≈ 10⁷ (then the memory is that of one target, plus
    # the k columns of the solution).
    group = max(1, _CG_GROUP_BYTES // (8 * D))
    W = np.empty((D, Y.shape[1]))
    diag = diag[:, None]
    buffer = {}

    def precondition(R):  # M⁻¹R into one buffer per group: block_cg uses it before the next call
        out = buffer.get(R.shape)
        if out is None:
            buffer.clear()
            out = buffer[R.shape] = np.empty(R.shape)
        return np.divide(R, diag, out=out)

    histories, n_iter, worst, statuses = [], 0, 0.0, set()
    for start in range(0, Y.shape[1], group):
        cols = slice(start, start + group)
        SY_cols = np.array(SY[:, cols])  # a contiguous copy (centred in place below)
        rhs = rmatvec(centre_rows(SY_cols) if fit_intercept else SY_cols)
        result = solvers.block_cg(
            A,
            rhs,
            preconditioner=precondition,
            max_iter=max_iter,
            tol=tol,
            callback=None if callback is None else (lambda it, X, res: callback(it, res)),
        )
        del rhs
        W[:, cols] = result.x
        histories.append(result.history)
        n_iter, worst = max(n_iter, result.n_iter), max(worst, result.residual)
        statuses.add(result.status)
        del result
    # the largest residual over the groups after each iteration (a group that stopped early
    # keeps its last)
    longest = max(len(h) for h in histories)
    history = np.max([h + h[-1:] * (longest - len(h)) for h in histories], axis=0)
    status = next(st for st in ("breakdown", "max_iter", "converged") if st in statuses)
    if warn:
        solvers.warn_unconverged(
            "sparse_ridge_cg (block-Jacobi CG)",
            solvers.CGResult(W, list(history), n_iter, status, worst),
            tol,
        )
    b = y_mean - z_mean @ W if fit_intercept else np.zeros(W.shape[1])
    if vector:
        return W[:, 0], float(b[0]), np.asarray(history)
    return W, b, history


class RidgeRegression(RegressorScoreMixin, RegressorMixin, BaseEstimator):
    r"""Primal ridge regression, the MAP estimate
    (:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`).

    .. math:: \mathbf w = (\lambda \mathbf I_d + \mathbf X^T \mathbf X)^{-1} \mathbf X^T \mathbf y

    solved by Cholesky on the d × d matrix: :math:`O(d^2 n)` to form
    :math:`\mathbf X^T \mathbf X`, :math:`O(d^3)` to factor it. When there are more features
    than samples (d > n) it solves the dual :math:`(\mathbf X \mathbf X^T + \lambda
    \mathbf I_n)\alpha = \mathbf y`, :math:`\mathbf w = \mathbf X^T \alpha` instead (the
    push-through identity; the same w in exact arithmetic), which stays accurate as λ → 0
    where the rank-deficient d × d system does not; scikit-learn's ``Ridge`` switches the
    same way. An ill-conditioned system (e.g. collinear columns with λ = 0) warns with its
    condition number (see :func:`solve_regularized_psd`).

    Intercept handling: with ``fit_intercept=True`` the columns of X and y are centered before
    the solve and the intercept :math:`b = \bar y - \bar x^T \mathbf w` is not penalized (the
    Gaussian prior is on w only), exactly as scikit-learn's ``Ridge(alpha=λ)`` does. With
    ``fit_intercept=False`` the model is :math:`f(x) = \mathbf w^T x` as in chapter 4.

    Parameters
    ----------
    lam : float >= 0, default=1.0
        The ridge λ (the :math:`\lambda\sigma^2` of the MAP derivation); scikit-learn calls it
        ``alpha``.
    fit_intercept : bool, default=True
        Whether to fit an unpenalized intercept.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        The weights w: (n_features,) for 1-D y, (n_targets, n_features) for 2-D y, also when
        y has a single column.
    intercept_ : float or ndarray of shape (n_targets,)
        The intercept b (0 when ``fit_intercept=False``).
    n_features_in_ : int

    See Also
    --------
    KernelRidge
        The same estimator in the dual, with any kernel.
    FeatureRidge
        Ridge on the output of a feature transformer.

    Notes
    -----
    Deliberate differences from scikit-learn's ``Ridge``: the ridge is called ``lam``; the
    solve runs in float64 whatever the dtype of X, so ``coef_``, ``intercept_`` and
    predictions are float64 (``Ridge`` keeps float32 input in float32); y of shape (n, 1)
    gives ``coef_`` of shape (1, n_features), as ``LinearRegression`` does, where ``Ridge``
    returns (n_features,). ``lam`` is one number for every target (one factorization serves
    them all), where ``Ridge`` also takes one α per target: fit each target on its own for
    different λ. X is dense: a scipy sparse X is refused with a TypeError that says how to
    convert it; ``FeatureRidge()`` (φ(x) = x) fits sparse X by conjugate gradients without
    forming a dense copy.

    References
    ----------
    A. E. Hoerl and R. W. Kennard, "Ridge regression: biased estimation for nonorthogonal
    problems", Technometrics 12 (1970). Ridge regression as a MAP estimate:
    :doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.ridge import RidgeRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 3.0 + 0.01 * rng.normal(size=100)
    >>> model = RidgeRegression(lam=1e-3).fit(X, y)
    >>> print(np.round(model.coef_, 2), round(float(model.intercept_), 2))
    [ 1.  -2.   0.5] 3.0
    """

    _parameter_constraints = {
        "lam": [real_constraint(0, None, closed="left")],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, lam=1.0, *, fit_intercept=True):
        self.lam = lam
        self.fit_intercept = fit_intercept

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit w (and b) on the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s_i`: minimises
            :math:`\\sum_i s_i (y_i - w^T x_i - b)^2 + \\lambda\\|w\\|^2`, as scikit-learn's
            ``Ridge``; an integer weight is the same as repeating the sample.
        """
        check_fit_input(X, y, regression=True)
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        sw = check_weights(sample_weight, X)
        w, intercept = _ridge_solve(X, y, float(self.lam), sw, self.fit_intercept)
        self.coef_ = w.T
        self.intercept_ = float(intercept) if y.ndim == 1 else intercept
        return self

    def predict(self, X):
        """Predict :math:`\\mathbf X \\mathbf w + b`."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return finite_values(lambda: X @ self.coef_.T + self.intercept_, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class KernelRidge(RegressorScoreMixin, RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression solved in the dual
    (:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`).

    .. math:: \alpha = (\mathbf K + \lambda \mathbf I_n)^{-1} \mathbf y, \qquad
              \hat f(x) = \sum_{i=1}^n \alpha_i K(x_i, x).

    The Gram matrix is built with one matrix product (:mod:`kernelcourse.kernels`) and factored
    by Cholesky in its own memory, so a fit holds a single n × n array. If
    :math:`\mathbf K + \lambda \mathbf I` is numerically not positive definite the fit warns with
    its smallest eigenvalue and condition number and falls back to least squares. No intercept
    is fitted, as in scikit-learn's ``KernelRidge``; center y first if needed.

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        A name from :data:`kernelcourse.kernels.KERNEL_NAMES` or any kernel object (sums,
        products, scaled kernels, ...).
    gamma : float > 0, "scale", array-like of shape (n_features,) or None, default=None
        γ of a named "rbf", "laplacian" or "polynomial" kernel; None means 1 / n_features, as
        in scikit-learn, and "scale" 1 / (n_features · Var X), the variance of all the entries
        of X (as scikit-learn's ``SVC``). An array gives the RBF kernel one γ_k per feature.
        Must stay None when ``kernel`` is an object.
    lam : float >= 0, default=1.0
        The ridge λ. scikit-learn's ``KernelRidge(alpha=λ)`` is the same model.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel (``degree``, ``coef0``, ``nu``, ``length_scale``,
        ``A``), passed to :func:`kernelcourse.kernels.resolve_kernel`.
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Precision of the Gram matrix and its factorization. float32 halves the memory and
        roughly halves the time of the :math:`O(n^3)` factorization, at about 1e-7 relative
        round-off per entry (use it with a λ that keeps K + λI well conditioned). Predictions
        are always computed in float64 (float32 on a device without float64).

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        The dual coefficients α.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training inputs :math:`x_i` (the centers of :math:`\hat f`).
    kernel_ : Kernel
        The resolved kernel.
    n_features_in_ : int

    See Also
    --------
    kernelcourse.scale.NystroemKRR
        The same model restricted to M Nyström centres, solved by FALKON.
    FeatureRidge
        Ridge on explicit (random) features: the primal view, linear in n.
    RidgeRegression
        The linear model this is the kernelization of.

    Notes
    -----
    Deliberate differences from scikit-learn's ``KernelRidge``: the ridge is called ``lam``
    (λ of the book) rather than ``alpha``; the default kernel is "rbf" (scikit-learn:
    "linear"); ``kernel="polynomial"`` has degree 2 and :math:`c_0 = 1` by default
    (scikit-learn: degree 3, coef0 = 1). γ = None means 1 / n_features in both. ``lam`` is
    one number for every target, so that one factorization of K + λI serves them all
    (scikit-learn also takes one α per target): fit each target on its own for different λ.

    Array-API input (PyTorch, CuPy, array-api-strict with
    ``sklearn.set_config(array_api_dispatch=True)``) is fitted and predicted with its own
    library on its own device; the fitted arrays live there too. A Gram matrix that does not
    fit in the device's free memory is refused before it is formed.

    References
    ----------
    The push-through identity and the Rademacher bound:
    :doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`. Saunders, Gammerman and Vovk (1998), "Ridge
    regression learning algorithm in dual variables".

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.ridge import KernelRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(200, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)
    >>> model = KernelRidge(gamma=0.5, lam=0.1).fit(X, y)
    >>> print(round(model.score(X, y), 2))
    0.98
    >>> print(np.round(model.predict([[0.0], [1.5]]), 2))
    [-0.02  1.02]
    """

    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"poly", "gaussian"}), Kernel],
        "gamma": gamma_constraint(per_feature=True),
        "lam": [real_constraint(0, None, closed="left")],
        "kernel_params": [dict, None],
        "dtype": [type, np.dtype],
    }

    def __init__(self, kernel="rbf", *, gamma=None, lam=1.0, kernel_params=None, dtype=np.float64):
        self.kernel = kernel
        self.gamma = gamma
        self.lam = lam
        self.kernel_params = kernel_params
        self.dtype = dtype

    def _resolve(self, X):
        return resolve_kernel(
            self.kernel,
            gamma=self.gamma,
            n_features=X.shape[1],
            X=X,
            **kernel_params_of(self.kernel_params),
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Compute α = (K + λI)⁻¹ y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s_i` on the squared errors, as in scikit-learn's
            ``KernelRidge``: with :math:`S = \\mathrm{diag}(s)`,
            :math:`\\alpha = S^{1/2}(S^{1/2} K S^{1/2} + \\lambda I)^{-1} S^{1/2} y`. With
            array-API X the weights may be of any library (or a list); the system is solved
            on X's device.
        """
        if np.dtype(self.dtype) not in (np.float32, np.float64):
            raise ValueError(
                f"dtype must be numpy.float32 or numpy.float64, got {np.dtype(self.dtype)}."
            )
        xp = namespace_of(X)
        if xp is not None:  # array-API input: K, its factor and α on X's device
            device = _array_api.device_of(X)
            dtype = _array_api.requested_float(xp, device, self.dtype)
            _check_lam_fits(self.lam, dtype == xp.float32)
            widest = _array_api.max_float(xp, device)
            X, y = validate_data(
                self, X, y, multi_output=True, y_numeric=True, dtype=[widest, xp.float32]
            )
            self.kernel_ = self._resolve(X)
            X_in = X
            X, centred = cast_for_kernel(X, dtype, self.kernel_.shift_invariant, xp=xp)
            y = xp.astype(_array_api.move(y, xp, device), widest, copy=False)
            # the weights are checked on the host (any library, a tensor that requires grad)
            sw = check_weights(sample_weight, np.empty((X.shape[0], 0)))
            root = None
            if sw is not None:  # √s in the widest float, as the numpy path weights in float64
                root = _array_api.from_numpy(np.sqrt(sw), xp, device, widest)
                y = y * (root if y.ndim == 1 else root[:, None])
                if not all_finite(y, xp):
                    raise ValueError(
                        "y·√sample_weight overflows to infinity; rescale y or sample_weight."
                    )
                root = cast_to(root, dtype, "√sample_weight", xp=xp)
            y = cast_to(y, dtype, "y" if root is None else "y·√sample_weight", xp=xp)
            self.dual_coef_ = devices.kernel_ridge_fit(
                self.kernel_, X, y, float(self.lam), xp, root=root
            )
            self.X_fit_ = X_in if centred else X  # predict evaluates against these points
            return self
        dtype = np.dtype(self.dtype)
        _check_lam_fits(self.lam, dtype == np.float32)
        check_fit_input(X, y, regression=True)
        X, y = validate_data(
            self, X, y, multi_output=True, y_numeric=True, dtype=[np.float64, np.float32]
        )
        self.kernel_ = self._resolve(X)
        X_in = X
        X, centred = cast_for_kernel(X, dtype, self.kernel_.shift_invariant)
        self.X_fit_ = X_in if centred else X  # predict evaluates against these points
        y = np.asarray(y, dtype=np.float64)
        sw = check_weights(sample_weight, X)
        root = None if sw is None else np.sqrt(sw)
        if root is not None:
            with np.errstate(over="ignore"):
                y = y * (root if y.ndim == 1 else root[:, None])
            if not np.isfinite(y).all():
                raise ValueError(
                    "y·√sample_weight overflows to infinity; rescale y or sample_weight."
                )
        # in float32, targets (or weighted targets) from about 3e38 on would become infinity
        y = cast_to(y, dtype, "y" if root is None else "y·√sample_weight")
        root = None if root is None else cast_to(root, dtype, "√sample_weight")

        def gram(checked):
            if checked:
                K = finite_gram(self.kernel_, X)
            else:
                with np.errstate(over="ignore", invalid="ignore"):
                    K = self.kernel_(X)
            if K.dtype != dtype:
                K = K.astype(dtype)
            if root is not None:
                K = K * root[:, None]
                K *= root[None, :]
            return K

        # NaN or infinity in K (inputs too large for the kernel) reaches the Cholesky pivots
        # or α, so the full check of K runs only when the factorization fails or α is not
        # finite, and then names the kernel.
        K = gram(checked=False)
        # Only the kernel object path can return a non-owned or read-only array; copy then.
        overwrite = K.flags.writeable and K.flags.owndata
        try:
            alpha = _solve_regularized_psd(
                K, y, float(self.lam), overwrite_a=overwrite, name="K", check_finite=False
            )
            finite = bool(np.isfinite(alpha).all())
        except linalg.LinAlgError:
            finite = False
        if not finite:
            # The in-place factorization destroyed K; rebuild it (checked) for the warned
            # least-squares fallback.
            alpha = _solve_regularized_psd(gram(checked=True), y, float(self.lam), name="K")
        if root is not None:
            alpha = alpha * (root if alpha.ndim == 1 else root[:, None])
        self.dual_coef_ = alpha
        return self

    def predict(self, X):
        r"""Predict :math:`\hat f(x) = \sum_i \alpha_i K(x_i, x)` for every row of X."""
        check_is_fitted(self)
        xp = namespace_of(X, fitted=self.dual_coef_, called=(self, "predict"))
        if xp is not None:
            X = validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])
            return devices.kernel_ridge_predict(self.kernel_, X, self.X_fit_, self.dual_coef_, xp)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        # The O(n³) solve may run in float32, but K(X, X_fit) α costs only O(m n d) and is
        # evaluated in float64 so predictions do not depend on how X is split into batches.
        X_fit = self.X_fit_.astype(np.float64, copy=False)
        return self.kernel_(X, X_fit) @ self.dual_coef_.astype(np.float64, copy=False)

    @property
    def rkhs_function_(self):
        r"""The fitted :math:`\hat f = \sum_i \alpha_i K(x_i, \cdot)` as an
        :class:`~kernelcourse.rkhs.RKHSFunction`, so that ``.norm()`` is
        :math:`\|\hat f\|_{\mathcal H} = \sqrt{\alpha^T \mathbf K \alpha}` (chapter 4)."""
        check_is_fitted(self)
        return RKHSFunction(self.kernel_, self.X_fit_, self.dual_coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.array_api_support = True
        return tags


def _copy_fitted_map(features, names, owner):
    """A copy of the fitted feature map ``features``, to be applied to the validated plain
    arrays of an estimator fitted on X with column names ``names`` (None without).

    A map fitted on a DataFrame checks column names itself; the arrays it gets here have
    none, so it warned "X does not have valid feature names" on every block, even when X had
    its very columns, and a reordered X passed with only that warning. The names are checked
    here once instead, as scikit-learn checks them, and the copy forgets them (those of the
    map inside a wrapper such as ``FrozenEstimator`` too).
    """
    features = copy.deepcopy(features)
    fitted = getattr(features, "feature_names_in_", None)
    if fitted is None:
        return features
    name = type(features).__name__
    if names is None:
        warnings.warn(
            f"X does not have valid feature names, but the features {name} of {owner} were "
            "fitted with feature names; its columns are taken in the order of fit.",
            UserWarning,
            stacklevel=find_stack_level(),
        )
    elif len(names) != len(fitted) or not np.array_equal(names, fitted):
        raise ValueError(
            f"X has the columns {list(names)}, but the features {name} of {owner} were fitted "
            f"on the columns {list(fitted)}: pass X with those columns, in that order."
        )
    holder = features
    while holder is not None and "feature_names_in_" not in getattr(holder, "__dict__", {}):
        holder = getattr(holder, "__dict__", {}).get("estimator")  # a wrapped map
    if holder is not None:
        del holder.__dict__["feature_names_in_"]
    return features


class _KernelFeatures:
    """A kernel's explicit feature map used as a fitted transformer."""

    def __init__(self, kernel):
        self.kernel = kernel

    def transform(self, X):
        return self.kernel.feature_map(X)


def _refuse_no_features(Phi, features):
    """Refuse a fitted feature map that gives Φ(X) no columns (a Nyström map whose landmarks'
    kernel matrix is zero keeps no eigenvalue): ridge on no features would otherwise fail
    naming an X of 0 features that the caller never passed."""
    shape = getattr(Phi, "shape", None)
    if shape is not None and len(shape) == 2 and shape[1] == 0:
        raise ValueError(
            f"features: the fitted {type(features).__name__} maps X to no features (Φ(X) has "
            "0 columns), as a Nystroem map does when the kernel matrix of its landmarks is "
            "zero; use another kernel or map, or check X."
        )


class FeatureRidge(RegressorScoreMixin, RegressorMixin, BaseEstimator):
    r"""Ridge regression on features :math:`\phi(x)`: the primal side of
    :doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`.

    .. math:: \mathbf w = (\lambda \mathbf I_D + \mathbf\Phi^T \mathbf\Phi)^{-1}
              \mathbf\Phi^T \mathbf y, \qquad \hat f(x) = \mathbf w^T \phi(x),

    a D × D solve by Cholesky. When the features are sparse (a scipy.sparse Φ, such as the
    one-hot output of :class:`~kernelcourse.features.RandomBinningFeatures`), the D × D matrix
    is never formed: :func:`sparse_ridge_cg` solves the same equations by conjugate gradients
    with the block-Jacobi preconditioner that binning features make exact and diagonal. When
    the features are exact, :math:`\mathbf\Phi \mathbf\Phi^T = \mathbf K`,
    the push-through identity makes this the same predictor as
    ``KernelRidge(kernel=k, lam=λ)``; with random features (Fourier, Nyström) it is their
    approximation.

    Parameters
    ----------
    features : Kernel, scikit-learn transformer or None, default=None
        Where φ comes from: a kernel with a finite feature map (``Linear``, ``Polynomial``,
        their sums and products) uses :meth:`~kernelcourse.kernels.Kernel.feature_map`; a
        transformer (e.g. ``kernelcourse.features.RandomFourierFeatures``) is cloned and fitted
        on X; None means φ(x) = x.
    lam : float >= 0, default=1.0
        The ridge λ on the sum of squared errors (penalty λ‖w‖²; the same convention as
        :class:`~kernelcourse.scale.StreamingFeatureRidge` and
        :class:`~kernelcourse.distributed.DaskFeatureRidge`).
    fit_intercept : bool, default=False
        Fit an unpenalized intercept on the features (False matches ``KernelRidge``).
    tol : float > 0, default=1e-4
        Sparse Φ only: relative residual at which :func:`sparse_ridge_cg` stops.
    max_iter : int >= 1, default=200
        Sparse Φ only: most conjugate-gradient iterations; a ``ConvergenceWarning`` names the
        residual reached when tol was not (as ``max_iter`` of
        :class:`~kernelcourse.scale.NystroemKRR`).
    verbose : None, bool or int >= 0, default=None
        Sparse Φ only: progress of conjugate gradients (iteration, relative residual,
        elapsed time). None: silent unless the solve runs longer than 30 s, then a line every
        30 s on standard error; 0: never; 1: a line at most every second, 2: every
        iteration, on standard output (:mod:`kernelcourse._progress`). A dense Φ is solved
        directly, in one step.

    Attributes
    ----------
    features_ : object
        The fitted feature map.
    ridge_ : RidgeRegression or None
        The primal ridge fitted on a dense Φ (None for a sparse Φ).
    coef_ : ndarray of shape (D,) or (n_targets, D)
        The weights w in feature space.
    intercept_ : float or ndarray of shape (n_targets,)
    history_ : ndarray or None
        Sparse Φ: the relative CG residual after each iteration (None for a dense Φ).
    n_iter_ : int
        Conjugate-gradient iterations (0 for a dense Φ, solved directly).
    n_features_in_ : int

    See Also
    --------
    kernelcourse.scale.StreamingFeatureRidge
        The same model when X does not fit in memory.
    kernelcourse.distributed.DaskFeatureRidge
        The same model on a Dask cluster.
    kernelcourse.scale.NystroemKRR
        Nyström kernel ridge regression by FALKON.
    KernelRidge
        The exact kernel model these features approximate.

    References
    ----------
    The push-through identity: :doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`. A. Rahimi and B.
    Recht, "Random features for large-scale kernel machines", NIPS 2007, for random features
    (:doc:`chapter 5 </book/05_bochner_random_fourier_features>`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomFourierFeatures
    >>> from kernelcourse.ridge import FeatureRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    >>> rff = RandomFourierFeatures(gamma=0.5, n_components=200, random_state=0)
    >>> model = FeatureRidge(rff, lam=0.1).fit(X, y)
    >>> print(round(model.score(X, y), 2))
    0.98
    """

    _parameter_constraints = {
        "features": [Kernel, HasMethods(["fit", "transform"]), None],
        "lam": [real_constraint(0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "tol": [real_constraint(0, None, closed="neither")],
        "max_iter": [count_constraint()],
        "verbose": ["verbose", None],
    }

    def __init__(
        self,
        features=None,
        *,
        lam=1.0,
        fit_intercept=False,
        tol=1e-4,
        max_iter=200,
        verbose=None,
    ):
        self.features = features
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit the feature map on X, then ridge on Φ(X).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights on the squared errors (see :class:`RidgeRegression`); the
            feature map is fitted without them.
        """
        check_fit_input(X, y, regression=True)
        X, y = validate_data(
            self,
            X,
            y,
            multi_output=True,
            y_numeric=True,
            dtype=np.float64,
            accept_sparse=self._accepts_sparse(),
        )
        sw = check_weights(sample_weight, X)
        Phi = None
        if self.features is None:
            self.features_ = None
        elif isinstance(self.features, Kernel):
            if not self.features.has_finite_features:
                raise ValueError(
                    f"features {self.features!r} has no finite feature map; use "
                    "KernelRidge for it, or random features / Nystroem as the features."
                )
            self.features_ = _KernelFeatures(self.features)
        elif hasattr(type(self.features), "fit_transform_codes") and not sp.issparse(X):
            # random binning: iterate on the cell indices, never on a CSR matrix. Asked of the
            # class: a wrapper such as FrozenEstimator lends its map's methods, and its map was
            # refitted here, in the user's own object, past the wrapper's no-op fit.
            self.features_ = clone(self.features)
            Phi = self.features_.fit_transform_codes(X)
        else:
            self.features_ = clone(self.features).fit(X, y)
            if getattr(self.features_, "feature_names_in_", None) is not None:
                # a map that kept its fit on a DataFrame (FrozenEstimator) gets arrays here
                names = vars(self).get("feature_names_in_")
                self.features_ = _copy_fitted_map(self.features_, names, type(self).__name__)
        if Phi is None:
            self._check_dense_memory(X)
            Phi = self._features(X)
        _refuse_no_features(Phi, self.features_)
        if sp.issparse(Phi) or hasattr(Phi, "rmatvec"):
            if self.lam == 0:
                raise ValueError(
                    "lam must be > 0 for sparse features: the iterative solver needs "
                    "ZᵀZ + λI positive definite."
                )
            progress = Progress("FeatureRidge.fit", self.verbose)

            def report(it, residual):
                if progress.due():
                    progress.report(
                        f"CG iteration {it}: relative residual {residual:.3e} (tol {self.tol:g})"
                    )

            W, b, self.history_ = sparse_ridge_cg(
                Phi,
                y,
                float(self.lam),
                fit_intercept=self.fit_intercept,
                tol=self.tol,
                max_iter=self.max_iter,
                sample_weight=sw,
                callback=report if progress else None,
            )
            progress.finish(
                f"done: {len(self.history_) - 1} CG iterations, relative residual "
                f"{self.history_[-1]:.3e} (tol {self.tol:g})"
            )
            self.ridge_ = None
            self.n_iter_ = len(self.history_) - 1
            self.coef_, self.intercept_ = W.T, b
            return self
        self.ridge_ = RidgeRegression(lam=self.lam, fit_intercept=self.fit_intercept).fit(
            Phi, y, sample_weight=sw
        )
        self.coef_ = self.ridge_.coef_
        self.intercept_ = self.ridge_.intercept_
        self.history_ = None
        self.n_iter_ = 0
        return self

    def _check_dense_memory(self, X):
        # Dense features: Z (n × D), a centred copy and the min(n, D)² system of _ridge_solve.
        # D comes from one row, so a 100 000-component map is refused before it is built: a
        # row of zeros, whose features are only counted (a row of X warned a second time,
        # with its own largest argument, where the cosine's phase is lost)
        if self.features_ is None or sp.issparse(X):
            return
        probe = self.features_.transform(np.zeros_like(X[:1]))
        if sp.issparse(probe) or hasattr(probe, "rmatvec"):
            return
        n, D = X.shape[0], probe.shape[1]
        check_memory(
            8 * (2 * n * D + min(n, D) ** 2),
            f"FeatureRidge with {D} features on {n} samples",
            "lower the transformer's n_components (or use fewer samples)",
        )

    def _features(self, X):
        if self.features_ is None:
            return X
        if hasattr(self.features_, "transform_codes") and not sp.issparse(X):
            return self.features_.transform_codes(X)
        Phi = refuse_complex_features(self.features_.transform(X))
        if sp.issparse(Phi):
            return sp.csr_matrix(Phi, dtype=np.float64)
        return np.asarray(Phi, dtype=np.float64)

    def predict(self, X):
        r"""Predict :math:`\mathbf w^T \phi(x) (+ b)`."""
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, dtype=np.float64, accept_sparse=self._accepts_sparse()
        )
        return finite_values(lambda: self._features(X) @ self.coef_.T + self.intercept_, X)

    def _accepts_sparse(self):
        # φ(x) = x passes a sparse X straight to the sparse solver; a kernel's finite feature
        # map needs dense rows, and a transformer says for itself whether it takes sparse X.
        return False if isinstance(self.features, Kernel) else "csr"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.input_tags.sparse = self.features is None
        return tags


class FeatureRidgeClassifier(ClassifierScoreMixin, ClassifierMixin, FeatureRidge):
    r"""One-vs-rest classification with :class:`FeatureRidge`: regress ±1 codes, predict the
    class with the largest score.

    Each class c gets the target :math:`y^{(c)}_i = +1` if :math:`y_i = c`, else −1, and all
    columns are solved with one feature map (for binning features, the cell indices are computed
    once and every conjugate-gradient pass is shared; :func:`sparse_ridge_cg`). Two classes give
    one column, and the sign of its score decides, as in scikit-learn's ``RidgeClassifier``.

    Parameters are those of :class:`FeatureRidge`; ``fit_intercept`` defaults to True here,
    because the ±1 codes of an unbalanced problem are not centred.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, D) for two classes, else (n_classes, D)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    features_, history_, n_iter_, n_features_in_ : as in :class:`FeatureRidge`.

    See Also
    --------
    FeatureRidge
        The regressor it fits on the ±1 codes.
    kernelcourse.scale.NystroemKRRClassifier
        The same one-vs-rest rule on Nyström kernel ridge.

    Notes
    -----
    Unlike scikit-learn's ``RidgeClassifier``, there is no ``class_weight`` parameter and no
    multilabel output. For class weights, pass each sample's class weight as
    ``sample_weight`` to :meth:`fit`: ``sklearn.utils.class_weight.compute_sample_weight(
    "balanced", y)`` gives the fit of ``class_weight="balanced"``, and a dict ``{c: w_c}``
    the weights ``w_{y_i}``. A multilabel y (an indicator matrix of shape (n_samples,
    n_labels)) is refused with a ValueError; fit one classifier per label, e.g.
    ``sklearn.multioutput.MultiOutputClassifier(FeatureRidgeClassifier(...))``.

    References
    ----------
    R. Rifkin and A. Klautau, "In defense of one-vs-all classification", JMLR 5 (2004),
    pp. 101–141 (regularized least squares on ±1 codes as a multiclass classifier). A. Rahimi
    and B. Recht, "Random features for large-scale kernel machines", NIPS 2007 (random binning);
    :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomBinningFeatures
    >>> from kernelcourse.ridge import FeatureRidgeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(600, 2))
    >>> y = np.digitize(X[:, 0] + X[:, 1] ** 2, [-0.3, 0.5])  # three classes
    >>> clf = FeatureRidgeClassifier(
    ...     RandomBinningFeatures(gamma=2.0, n_grids=30, random_state=0), lam=1.0
    ... ).fit(X, y)
    >>> print(clf.classes_, clf.coef_.shape[0], round(clf.score(X, y), 3))
    [0 1 2] 3 0.985
    """

    def __init__(
        self, features=None, *, lam=1.0, fit_intercept=True, tol=1e-4, max_iter=200, verbose=None
    ):
        super().__init__(
            features,
            lam=lam,
            fit_intercept=fit_intercept,
            tol=tol,
            max_iter=max_iter,
            verbose=verbose,
        )

    def fit(self, X, y, sample_weight=None):
        """Fit one ±1 regression per class (one for two classes).

        ``sample_weight`` as in :meth:`FeatureRidge.fit`.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        check_fit_input(X, y)
        shape = y.shape if hasattr(y, "shape") else np.asarray(y).shape  # sparse, lists
        if len(shape) == 2 and shape[1] > 1:  # a single column is raveled, with a warning
            raise ValueError(
                f"y has shape {shape}: {type(self).__name__} has no multilabel or multi-output "
                "classification (one label per sample); fit one classifier per column, e.g. "
                "with sklearn.multioutput.MultiOutputClassifier."
            )
        classes, Y, codes = one_vs_rest_targets(check_labels(y, ravel=True))
        try:
            sw = check_weights(sample_weight, Y)
        except (ValueError, TypeError):
            sw = None  # refused below by FeatureRidge.fit, which checks X first
        # a class whose samples all weigh 0 got the code −1 everywhere it counts, silently
        check_class_totals(codes, sw, classes)
        super().fit(X, Y, sample_weight=sample_weight)
        self.classes_ = classes
        return self

    def decision_function(self, X):
        """Scores f_c(x): shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes)."""
        scores = super().predict(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class with the largest score (the sign of the score for two classes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = False
        return tags
