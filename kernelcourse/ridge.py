r"""Ridge regression in the primal, kernel ridge regression in the dual, and ridge on features.

Lecture 001 derives ridge regression as the MAP estimate of the weights under the likelihood
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
lecture 002 writes the same solution as the minimizer of the penalized empirical risk).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._threads import single_blas_thread
from ._validation import check_fit_input, finite_gram
from .kernels import KERNEL_NAMES, Kernel, resolve_kernel
from .rkhs import RKHSFunction

__all__ = ["RidgeRegression", "KernelRidge", "FeatureRidge", "solve_regularized_psd"]

# Below this size a threaded Cholesky gains little, and on a busy machine its threads can wait
# on each other for far longer than the factorization takes; factor with one BLAS thread.
_SINGLE_THREAD_MAX_N = 512


def _cho_factor(M):
    if M.shape[0] <= _SINGLE_THREAD_MAX_N:
        with single_blas_thread():
            return linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    return linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)


def _check_lam(lam):
    """λ as a float: a finite real number >= 0 (TypeError/ValueError naming ``lam``)."""
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        raise TypeError(f"lam must be a real number >= 0, got {lam!r}.")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}.")
    return lam


def _check_finite(A, name, block=1024):
    """Raise if A holds NaN or infinity, checked in blocks of rows (no n × n temporary).
    Both triangles: the factorization reads one, and a NaN in the other would go unseen."""
    for start in range(0, A.shape[0], block):
        if not np.isfinite(A[start : start + block]).all():
            raise ValueError(
                f"A ({name}) contains NaN or infinity; a kernel or Gram matrix must be "
                "finite. Check the inputs and the kernel."
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
    bn = np.linalg.norm(B, axis=0)
    growth = float(np.max(np.linalg.norm(X, axis=0) / np.where(bn > 0, bn, 1.0)))
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
            stacklevel=4,
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
    r = np.linalg.norm(AX - B, axis=0)
    bn = np.linalg.norm(B, axis=0)
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
        factorization, so both are checked for NaN and infinity first).
    b : array of shape (n,) or (n, k)
    lam : float >= 0
        The ridge λ added to the diagonal.
    overwrite_a : bool
        Factor in place.
    name : str
        Name of A in the warnings and errors.

    Raises
    ------
    ValueError
        If A is not square or not finite, b does not match it or is not finite, or λ is
        negative or not finite.
    """
    return _solve_regularized_psd(A, b, lam, overwrite_a=overwrite_a, name=name)


def _solve_regularized_psd(A, b, lam, *, overwrite_a=False, name="K", check_finite=True):
    """:func:`solve_regularized_psd`; ``check_finite=False`` skips the check of A when the
    caller has made it (a Gram matrix from :func:`~kernelcourse._validation.finite_gram`)."""
    lam = _check_lam(lam)
    if not isinstance(A, np.ndarray) or A.dtype not in (np.float32, np.float64):
        A = np.array(A, dtype=np.float64)
        overwrite_a = True  # already a private copy
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(f"A ({name}) must be a non-empty square matrix, got shape {A.shape}.")
    b = np.asarray(b)
    if b.dtype == object or not np.issubdtype(b.dtype, np.number) or np.iscomplexobj(b):
        raise TypeError(f"b must be a real numeric array, got dtype {b.dtype}.")
    n = A.shape[0]
    if b.ndim not in (1, 2) or b.shape[0] != n:
        raise ValueError(
            f"b must have shape ({n},) or ({n}, k) to match A ({name}), got shape {b.shape}."
        )
    if not np.isfinite(b).all():
        raise ValueError("b contains NaN or infinity.")
    if check_finite:
        _check_finite(A, name)
    a_diag = A.diagonal().copy()
    backup = None if overwrite_a else A
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
                stacklevel=3,
            )
        return x
    if backup is None:
        raise linalg.LinAlgError(
            f"{name} + λI is not positive definite and was overwritten; refit with "
            "overwrite_a=False to use the least-squares fallback."
        ) from None
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
        stacklevel=3,
    )
    sol = linalg.lstsq(M, b, check_finite=False)[0]
    return sol.astype(A.dtype, copy=False)


def _check_weights(sample_weight, X):
    """Non-negative finite sample weights with a positive sum, or None for all ones."""
    if sample_weight is None:
        return None
    try:
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    except ValueError as err:
        raise ValueError(f"sample_weight: {err}") from err
    if not sw.sum() > 0:
        raise ValueError("sample_weight sums to zero; at least one sample needs weight > 0.")
    return sw


def _ridge_solve(X, y, lam, sw, fit_intercept, name="X"):
    r"""w (d,) or (d, k) and b of weighted ridge regression, in the better-conditioned form.

    Centre with the weighted means (the intercept is not penalised), scale the rows by
    :math:`\sqrt{s_i}`, then solve the primal :math:`(X^TX + \lambda I)w = X^Ty` (d × d) when
    d <= n, and otherwise the dual :math:`(XX^T + \lambda I)\alpha = y`, :math:`w = X^T\alpha`
    (n × n, the push-through identity of lecture 001). With d > n, :math:`X^TX` has rank
    at most n and :math:`X^TX + \lambda I` a condition number of order
    :math:`\|X\|^2/\lambda`, so the primal loses every digit as λ → 0; the dual does not.
    """
    n, d = X.shape
    if fit_intercept:
        x_mean = np.average(X, axis=0, weights=sw)
        y_mean = np.average(y, axis=0, weights=sw)
        Xc, yc = X - x_mean, y - y_mean
    else:
        x_mean, y_mean = np.zeros(d), np.zeros(y.shape[1:])
        Xc, yc = X, y
    root = None
    if sw is not None:
        root = np.sqrt(sw)
        Xc = Xc * root[:, None]
        yc = yc * (root if yc.ndim == 1 else root[:, None])
    if d <= n:
        G = Xc.T @ Xc
        w = solve_regularized_psd(G, Xc.T @ yc, lam, name=f"{name}ᵀ{name}")
    else:
        K = Xc @ Xc.T
        if fit_intercept:
            # Centring puts u = √s (the ones vector without weights) in the null space of
            # XXᵀ, and y is orthogonal to it; adding c·uuᵀ/‖u‖² leaves α unchanged and removes
            # the near-zero eigenvalue λ that would otherwise ruin the factorization.
            u = np.ones(n) if root is None else root
            K += (np.trace(K) / n + 1.0) / (u @ u) * np.outer(u, u)
        alpha = solve_regularized_psd(K, yc, lam, name=f"{name}{name}ᵀ")
        w = Xc.T @ alpha
    return w, y_mean - x_mean @ w


class RidgeRegression(RegressorMixin, BaseEstimator):
    r"""Primal ridge regression, the MAP estimate of lecture 001.

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
    ``fit_intercept=False`` the model is :math:`f(x) = \mathbf w^T x` as in the lecture.

    Parameters
    ----------
    lam : float >= 0, default=1.0
        The ridge λ (the lecture's :math:`\lambda\sigma^2`); scikit-learn calls it ``alpha``.
    fit_intercept : bool, default=True
        Whether to fit an unpenalized intercept.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        The weights w.
    intercept_ : float or ndarray of shape (n_targets,)
        The intercept b (0 when ``fit_intercept=False``).
    n_features_in_ : int

    References
    ----------
    Lecture 001 (ridge regression as MAP); Hoerl and Kennard (1970).
    """

    _parameter_constraints = {
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
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
        sw = _check_weights(sample_weight, X)
        w, intercept = _ridge_solve(X, y, float(self.lam), sw, self.fit_intercept)
        self.coef_ = w.T
        self.intercept_ = float(intercept) if y.ndim == 1 else intercept
        return self

    def predict(self, X):
        """Predict :math:`\\mathbf X \\mathbf w + b`."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_.T + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class KernelRidge(RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression solved in the dual (lectures 001 and 002).

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
    gamma : float > 0 or None, default=None
        γ of a named "rbf", "laplacian" or "polynomial" kernel; None means 1 / n_features, as
        in scikit-learn. Must stay None when ``kernel`` is an object.
    lam : float >= 0, default=1.0
        The ridge λ. scikit-learn's ``KernelRidge(alpha=λ)`` is the same model.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel (``degree``, ``coef0``, ``nu``, ``length_scale``,
        ``A``), passed to :func:`kernelcourse.kernels.resolve_kernel`.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the Gram matrix and its factorization. float32 halves the memory and
        roughly halves the time of the :math:`O(n^3)` factorization, at about 1e-7 relative
        round-off per entry (use it with a λ that keeps K + λI well conditioned). Predictions
        are always computed in float64.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        The dual coefficients α.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training inputs :math:`x_i` (the centers of :math:`\hat f`).
    kernel_ : Kernel
        The resolved kernel.
    n_features_in_ : int

    Notes
    -----
    Deliberate differences from scikit-learn's ``KernelRidge``: the ridge is called ``lam``
    (λ of the lectures) rather than ``alpha``; the default kernel is "rbf" (scikit-learn:
    "linear"); ``kernel="polynomial"`` has degree 2 and :math:`c_0 = 1` by default
    (scikit-learn: degree 3, coef0 = 1). γ = None means 1 / n_features in both.

    References
    ----------
    Lecture 001 (push-through identity), lecture 002 (kernel machines, Rademacher bound);
    Saunders, Gammerman and Vovk (1998), "Ridge regression learning algorithm in dual
    variables".
    """

    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"poly", "gaussian"}), Kernel],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "kernel_params": [dict, None],
        "dtype": [StrOptions({"float64", "float32"})],
    }

    def __init__(self, kernel="rbf", *, gamma=None, lam=1.0, kernel_params=None, dtype="float64"):
        self.kernel = kernel
        self.gamma = gamma
        self.lam = lam
        self.kernel_params = kernel_params
        self.dtype = dtype

    def _resolve(self, n_features):
        return resolve_kernel(
            self.kernel, gamma=self.gamma, n_features=n_features, **(self.kernel_params or {})
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
            :math:`\\alpha = S^{1/2}(S^{1/2} K S^{1/2} + \\lambda I)^{-1} S^{1/2} y`.
        """
        dtype = np.dtype(self.dtype)
        check_fit_input(X, y, regression=True)
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=dtype)
        self.kernel_ = self._resolve(X.shape[1])
        y = np.asarray(y, dtype=dtype)
        sw = _check_weights(sample_weight, X)
        root = None if sw is None else np.sqrt(sw).astype(dtype)
        if root is not None:
            y = y * (root if y.ndim == 1 else root[:, None])

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
        self.X_fit_ = X
        return self

    def predict(self, X):
        r"""Predict :math:`\hat f(x) = \sum_i \alpha_i K(x_i, x)` for every row of X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        # The O(n³) solve may run in float32, but K(X, X_fit) α costs only O(m n d) and is
        # evaluated in float64 so predictions do not depend on how X is split into batches.
        X_fit = self.X_fit_.astype(np.float64, copy=False)
        return self.kernel_(X, X_fit) @ self.dual_coef_.astype(np.float64, copy=False)

    @property
    def rkhs_function_(self):
        r"""The fitted :math:`\hat f = \sum_i \alpha_i K(x_i, \cdot)` as an
        :class:`~kernelcourse.rkhs.RKHSFunction`, so that ``.norm()`` is
        :math:`\|\hat f\|_{\mathcal H} = \sqrt{\alpha^T \mathbf K \alpha}` (lecture 002)."""
        check_is_fitted(self)
        return RKHSFunction(self.kernel_, self.X_fit_, self.dual_coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class _KernelFeatures:
    """A kernel's explicit feature map used as a fitted transformer."""

    def __init__(self, kernel):
        self.kernel = kernel

    def transform(self, X):
        return self.kernel.feature_map(X)


class FeatureRidge(RegressorMixin, BaseEstimator):
    r"""Ridge regression on features :math:`\phi(x)`: the primal side of lecture 001.

    .. math:: \mathbf w = (\lambda \mathbf I_D + \mathbf\Phi^T \mathbf\Phi)^{-1}
              \mathbf\Phi^T \mathbf y, \qquad \hat f(x) = \mathbf w^T \phi(x),

    a D × D solve. When the features are exact, :math:`\mathbf\Phi \mathbf\Phi^T = \mathbf K`,
    the push-through identity makes this the same predictor as
    ``KernelRidge(kernel=k, lam=λ)``; with random features (Fourier, Nyström) it is their
    approximation.

    Parameters
    ----------
    transformer : Kernel, scikit-learn transformer or None, default=None
        Where φ comes from: a kernel with a finite feature map (``Linear``, ``Polynomial``,
        their sums and products) uses :meth:`~kernelcourse.kernels.Kernel.feature_map`; a
        transformer (e.g. ``kernelcourse.features.RandomFourierFeatures``) is cloned and fitted
        on X; None means φ(x) = x.
    lam : float >= 0, default=1.0
        The ridge λ.
    fit_intercept : bool, default=False
        Fit an unpenalized intercept on the features (False matches ``KernelRidge``).

    Attributes
    ----------
    transformer_ : object
        The fitted feature map.
    ridge_ : RidgeRegression
        The primal ridge fitted on Φ.
    coef_ : ndarray of shape (D,) or (n_targets, D)
        The weights w in feature space.
    n_features_in_ : int

    References
    ----------
    Lecture 001 (the push-through identity); Rahimi and Recht (2007) for random features.
    """

    _parameter_constraints = {
        "transformer": [Kernel, HasMethods(["fit", "transform"]), None],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, transformer=None, *, lam=1.0, fit_intercept=False):
        self.transformer = transformer
        self.lam = lam
        self.fit_intercept = fit_intercept

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
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        if self.transformer is None:
            self.transformer_ = None
        elif isinstance(self.transformer, Kernel):
            if not self.transformer.has_finite_features:
                raise ValueError(
                    f"transformer {self.transformer!r} has no finite feature map; use "
                    "KernelRidge for it, or random features / Nystroem as the transformer."
                )
            self.transformer_ = _KernelFeatures(self.transformer)
        else:
            self.transformer_ = clone(self.transformer).fit(X, y)
        Phi = self._features(X)
        self.ridge_ = RidgeRegression(lam=self.lam, fit_intercept=self.fit_intercept).fit(
            Phi, y, sample_weight=sample_weight
        )
        self.coef_ = self.ridge_.coef_
        self.intercept_ = self.ridge_.intercept_
        return self

    def _features(self, X):
        if self.transformer_ is None:
            return X
        return np.asarray(self.transformer_.transform(X), dtype=np.float64)

    def predict(self, X):
        r"""Predict :math:`\mathbf w^T \phi(x) (+ b)`."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.ridge_.predict(self._features(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
