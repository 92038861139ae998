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
import scipy.sparse as sp
from scipy import linalg
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _array_api, devices
from ._array_api import namespace_of
from ._threads import single_blas_thread
from .kernels import KERNEL_NAMES, Kernel, resolve_kernel
from .rkhs import RKHSFunction

__all__ = [
    "RidgeRegression",
    "KernelRidge",
    "FeatureRidge",
    "solve_regularized_psd",
    "sparse_ridge_cg",
    "preconditioned_cg",
]

# Below this size a threaded Cholesky gains little, and on a busy machine its threads can wait
# on each other for far longer than the factorization takes; factor with one BLAS thread.
_SINGLE_THREAD_MAX_N = 512


def _cho_factor(M):
    if M.shape[0] <= _SINGLE_THREAD_MAX_N:
        with single_blas_thread():
            return linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    return linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)


def solve_regularized_psd(A, b, lam, *, overwrite_a=False, name="K"):
    r"""Solve :math:`(\mathbf A + \lambda \mathbf I) x = b` for symmetric PSD A by Cholesky.

    With ``overwrite_a=True`` the factorization happens in A's own memory (A is destroyed), so
    no second n × n array is allocated. When :math:`\mathbf A + \lambda \mathbf I` is not
    numerically positive definite (λ = 0 and A singular, or A not PSD) it warns with the
    smallest eigenvalue and condition number and returns the least-squares solution instead.

    Parameters
    ----------
    A : array of shape (n, n)
    b : array of shape (n,) or (n, k)
    lam : float >= 0
        The ridge λ added to the diagonal.
    overwrite_a : bool
        Factor in place.
    name : str
        Name of A in the warning.
    """
    n = A.shape[0]
    backup = None if overwrite_a else A
    M = A if overwrite_a else A.copy()
    M.flat[:: n + 1] += lam
    if M.flags.c_contiguous and not M.flags.f_contiguous:
        # LAPACK wants column-major memory; the transpose of a symmetric matrix is the same
        # matrix, so hand over the column-major view instead of letting scipy copy.
        M = M.T
    try:
        factor = _cho_factor(M)
        return linalg.cho_solve(factor, b, overwrite_b=False, check_finite=False)
    except linalg.LinAlgError:
        pass
    if backup is None:
        raise linalg.LinAlgError(
            f"{name} + λI is not positive definite and was overwritten; refit with "
            "overwrite_a=False to use the least-squares fallback."
        ) from None
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


def sparse_ridge_cg(Z, Y, lam, *, fit_intercept=False, tol=1e-4, maxiter=200, warn=True):
    r"""Ridge on sparse features by block-Jacobi-preconditioned conjugate gradients.

    Solves :math:`(\mathbf Z^T \mathbf Z + \lambda \mathbf I)\,\mathbf w = \mathbf Z^T
    \mathbf y` (lecture 001's normal equations, with an optional unpenalized intercept b)
    touching Z only through the products :math:`\mathbf Z v` and :math:`\mathbf Z^T r`, each
    :math:`O(\mathrm{nnz}(\mathbf Z))`.

    **Why block Jacobi is cheap and exact for random binning features** (Rahimi & Recht 2007;
    lecture 004). The columns of :math:`\mathbf Z = P^{-1/2}[\mathbf Z_1, \dots, \mathbf Z_P]`
    fall into one block per grid, and each row of a block :math:`\mathbf Z_p` holds a single
    one: the cell of grid p the point falls in. Two different cells of one grid never share
    a point, so the columns of :math:`\mathbf Z_p` are orthogonal and

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

    Parameters
    ----------
    Z : sparse matrix of shape (n, D) or :class:`~kernelcourse.features.BinCodes`
        BinCodes (from ``RandomBinningFeatures.fit_transform_codes``) hold binning features as
        cell indices and multiply with compiled loops on all cores.
    Y : ndarray of shape (n,) or (n, k)
        Targets; k columns are solved together (one pass over Z per iteration for all).
    lam : float > 0
        The ridge λ (penalty :math:`\lambda \|\mathbf w\|^2`; the intercept is not penalized).
    fit_intercept : bool, default=False
        Add an unpenalized intercept, i.e. a column of ones that is its own block.
    tol : float > 0, default=1e-4
        Stop when every relative residual :math:`\|\mathbf Z^T \mathbf y - \mathbf A
        \mathbf w\| / \|\mathbf Z^T \mathbf y\|` is at most tol.
    maxiter : int >= 1, default=200
    warn : bool, default=True
        Warn (``ConvergenceWarning``, naming the residual) when tol is not reached.

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
    Lecture 001 (ridge normal equations), lecture 004 (random binning).
    """
    if not (sp.issparse(Z) or hasattr(Z, "rmatvec")):
        raise TypeError(f"Z must be a scipy.sparse matrix or BinCodes, got {type(Z).__name__}.")
    if not (isinstance(lam, numbers.Real) and lam > 0):
        raise ValueError(f"lam must be a positive number for the iterative solver, got {lam!r}.")
    if not (isinstance(maxiter, numbers.Integral) and maxiter >= 1):
        raise ValueError(f"maxiter must be an integer >= 1, got {maxiter!r}.")
    if not (isinstance(tol, numbers.Real) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}.")
    Y = np.asarray(Y, dtype=np.float64)
    vector = Y.ndim == 1
    Y = Y[:, None] if vector else Y
    n, D = Z.shape
    if len(Y) != n:
        raise ValueError(f"Y has {len(Y)} rows but Z has {n}.")
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, dtype=np.float64)
        Zt = Z.T.tocsr()  # Zᵀr as a row-major product: faster than a transposed CSR product
        rmatvec, col_sq = Zt.__matmul__, np.asarray(Z.multiply(Z).sum(axis=0)).ravel()
    else:  # BinCodes: the cell index of each point in each grid
        rmatvec, col_sq = Z.rmatvec, Z.column_sq_norms()
    lam = float(lam)

    def A(V):  # (ZᵀZ + λI) v, with the intercept as the last, unpenalized coordinate
        if not fit_intercept:
            return rmatvec(Z @ V) + lam * V
        r = Z @ V[:D] + V[D]
        return np.vstack([rmatvec(r) + lam * V[:D], r.sum(axis=0, keepdims=True)])

    # M = blockdiag(Z_pᵀZ_p) + λI = diag(ZᵀZ) + λI; the intercept block is the count n
    diag = col_sq + lam
    if fit_intercept:
        diag = np.append(diag, float(n))
    rhs = rmatvec(Y)
    if fit_intercept:
        rhs = np.vstack([rhs, Y.sum(axis=0, keepdims=True)])
    W, history = preconditioned_cg(A, rhs, diag, tol=tol, maxiter=maxiter)
    if warn and history[-1] > tol:
        warnings.warn(
            f"block-Jacobi CG stopped after {len(history) - 1} iterations with relative "
            f"residual ‖Zᵀy − (ZᵀZ + λI)w‖/‖Zᵀy‖ = {history[-1]:.2e} > tol = {tol:g}; raise "
            "maxiter or lam.",
            ConvergenceWarning,
            stacklevel=2,
        )
    b = W[D] if fit_intercept else np.zeros(W.shape[1])
    W = W[:D]
    if vector:
        return W[:, 0], float(b[0]), np.asarray(history)
    return W, b, history


def preconditioned_cg(matvec, B, diag, *, tol=1e-4, maxiter=200):
    r"""Conjugate gradients for :math:`\mathbf A \mathbf X = \mathbf B` (A symmetric positive
    definite, given as ``matvec``) preconditioned by the diagonal ``diag`` of a (block-)
    diagonal :math:`\mathbf M`: the recursion of Saad (2003), algorithm 9.1, with
    :math:`\mathbf z_k = \mathbf M^{-1} \mathbf r_k`. The k columns of B run their own step
    sizes and share one call of ``matvec`` per iteration.

    Returns
    -------
    X : ndarray of shape (D, k)
    history : ndarray
        Largest relative residual :math:`\|\mathbf b_j - \mathbf A \mathbf x_j\| /
        \|\mathbf b_j\|` after each iteration, 1 at the start.
    """
    B = np.asarray(B, dtype=np.float64)
    diag = np.asarray(diag, dtype=np.float64)[:, None]
    X = np.zeros_like(B)
    R = B.copy()
    norm = np.linalg.norm(B, axis=0)
    norm[norm == 0] = 1.0
    Zr = R / diag
    Pdir = Zr.copy()
    rz = np.einsum("ij,ij->j", R, Zr)
    history = [float(np.max(np.linalg.norm(R, axis=0) / norm))]
    for _ in range(maxiter):
        if history[-1] <= tol:
            break
        AP = matvec(Pdir)
        pAp = np.einsum("ij,ij->j", Pdir, AP)
        # a column that has converged exactly has p = 0; keep it where it is
        step = np.divide(rz, pAp, out=np.zeros_like(rz), where=pAp > 0)
        X += step * Pdir
        R -= step * AP
        Zr = R / diag
        rz_new = np.einsum("ij,ij->j", R, Zr)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        Pdir = Zr + beta * Pdir
        rz = rz_new
        history.append(float(np.max(np.linalg.norm(R, axis=0) / norm)))
    return X, np.asarray(history)


class RidgeRegression(RegressorMixin, BaseEstimator):
    r"""Primal ridge regression, the MAP estimate of lecture 001.

    .. math:: \mathbf w = (\lambda \mathbf I_d + \mathbf X^T \mathbf X)^{-1} \mathbf X^T \mathbf y

    solved by Cholesky on the d × d matrix: :math:`O(d^2 n)` to form
    :math:`\mathbf X^T \mathbf X`, :math:`O(d^3)` to factor it.

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
    def fit(self, X, y):
        """Fit w (and b) on the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        """
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if self.fit_intercept:
            x_mean, y_mean = X.mean(axis=0), y.mean(axis=0)
            Xc, yc = X - x_mean, y - y_mean
        else:
            x_mean, y_mean = np.zeros(X.shape[1]), np.zeros(y.shape[1:])
            Xc, yc = X, y
        G = Xc.T @ Xc
        w = solve_regularized_psd(G, Xc.T @ yc, float(self.lam), overwrite_a=False, name="XᵀX")
        self.coef_ = w.T
        self.intercept_ = y_mean - x_mean @ w
        if y.ndim == 1:
            self.intercept_ = float(self.intercept_)
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
        are always computed in float64 (float32 on a device without float64).

    Notes
    -----
    Array-API input (PyTorch, CuPy, array-api-strict with
    ``sklearn.set_config(array_api_dispatch=True)``) is fitted and predicted with its own
    library on its own device; the fitted arrays live there too. A Gram matrix that does not
    fit in the device's free memory is refused before it is formed.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        The dual coefficients α.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training inputs :math:`x_i` (the centers of :math:`\hat f`).
    kernel_ : Kernel
        The resolved kernel.
    n_features_in_ : int

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
    def fit(self, X, y):
        """Compute α = (K + λI)⁻¹ y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        """
        xp = namespace_of(X)
        if xp is not None:  # array-API input: K, its factor and α on X's device
            dtype = getattr(xp, self.dtype)
            X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=dtype)
            self.kernel_ = self._resolve(X.shape[1])
            y = xp.astype(_array_api.move(y, xp, _array_api.device_of(X)), dtype)
            self.dual_coef_ = devices.kernel_ridge_fit(self.kernel_, X, y, float(self.lam), xp)
            self.X_fit_ = X
            return self
        dtype = np.dtype(self.dtype)
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=dtype)
        self.kernel_ = self._resolve(X.shape[1])
        y = np.asarray(y, dtype=dtype)
        K = self.kernel_(X)
        if K.dtype != dtype:
            K = K.astype(dtype)
        # Only the kernel object path can return a non-owned or read-only array; copy then.
        overwrite = K.flags.writeable and K.flags.owndata
        try:
            self.dual_coef_ = solve_regularized_psd(
                K, y, float(self.lam), overwrite_a=overwrite, name="K"
            )
        except linalg.LinAlgError:
            # The in-place factorization destroyed K; rebuild it for the warned fallback.
            self.dual_coef_ = solve_regularized_psd(
                self.kernel_(X).astype(dtype, copy=False), y, float(self.lam), name="K"
            )
        self.X_fit_ = X
        return self

    def predict(self, X):
        r"""Predict :math:`\hat f(x) = \sum_i \alpha_i K(x_i, x)` for every row of X."""
        check_is_fitted(self)
        xp = namespace_of(X, fitted=self.dual_coef_)
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
        :math:`\|\hat f\|_{\mathcal H} = \sqrt{\alpha^T \mathbf K \alpha}` (lecture 002)."""
        check_is_fitted(self)
        return RKHSFunction(self.kernel_, self.X_fit_, self.dual_coef_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.array_api_support = True
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
    transformer : Kernel, scikit-learn transformer or None, default=None
        Where φ comes from: a kernel with a finite feature map (``Linear``, ``Polynomial``,
        their sums and products) uses :meth:`~kernelcourse.kernels.Kernel.feature_map`; a
        transformer (e.g. ``kernelcourse.features.RandomFourierFeatures``) is cloned and fitted
        on X; None means φ(x) = x.
    lam : float >= 0, default=1.0
        The ridge λ.
    fit_intercept : bool, default=False
        Fit an unpenalized intercept on the features (False matches ``KernelRidge``).
    tol : float > 0, default=1e-4
        Sparse Φ only: relative residual at which :func:`sparse_ridge_cg` stops.
    maxiter : int >= 1, default=200
        Sparse Φ only: most conjugate-gradient iterations; a ``ConvergenceWarning`` names the
        residual reached when tol was not (as ``maxiter`` of
        :class:`~kernelcourse.scale.NystroemKRR`).

    Attributes
    ----------
    transformer_ : object
        The fitted feature map.
    ridge_ : RidgeRegression or None
        The primal ridge fitted on a dense Φ (None for a sparse Φ).
    coef_ : ndarray of shape (D,) or (n_targets, D)
        The weights w in feature space.
    intercept_ : float or ndarray of shape (n_targets,)
    history_ : ndarray or None
        Sparse Φ: the relative CG residual after each iteration (None for a dense Φ).
    n_features_in_ : int

    References
    ----------
    Lecture 001 (the push-through identity); Rahimi and Recht (2007) for random features.
    """

    _parameter_constraints = {
        "transformer": [Kernel, HasMethods(["fit", "transform"]), None],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "maxiter": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, transformer=None, *, lam=1.0, fit_intercept=False, tol=1e-4, maxiter=200):
        self.transformer = transformer
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.maxiter = maxiter

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the feature map on X, then ridge on Φ(X)."""
        X, y = validate_data(
            self,
            X,
            y,
            multi_output=True,
            y_numeric=True,
            dtype=np.float64,
            accept_sparse=self._accepts_sparse(),
        )
        Phi = None
        if self.transformer is None:
            self.transformer_ = None
        elif isinstance(self.transformer, Kernel):
            if not self.transformer.has_finite_features:
                raise ValueError(
                    f"transformer {self.transformer!r} has no finite feature map; use "
                    "KernelRidge for it, or random features / Nystroem as the transformer."
                )
            self.transformer_ = _KernelFeatures(self.transformer)
        elif hasattr(self.transformer, "fit_transform_codes") and not sp.issparse(X):
            # random binning: iterate on the cell indices, never on a CSR matrix
            self.transformer_ = clone(self.transformer)
            Phi = self.transformer_.fit_transform_codes(X)
        else:
            self.transformer_ = clone(self.transformer).fit(X, y)
        if Phi is None:
            Phi = self._features(X)
        if sp.issparse(Phi) or hasattr(Phi, "rmatvec"):
            if self.lam == 0:
                raise ValueError(
                    "lam must be > 0 for sparse features: the iterative solver needs "
                    "ZᵀZ + λI positive definite."
                )
            W, b, self.history_ = sparse_ridge_cg(
                Phi,
                y,
                float(self.lam),
                fit_intercept=self.fit_intercept,
                tol=self.tol,
                maxiter=self.maxiter,
            )
            self.ridge_ = None
            self.coef_, self.intercept_ = W.T, b
            return self
        self.ridge_ = RidgeRegression(lam=self.lam, fit_intercept=self.fit_intercept).fit(Phi, y)
        self.coef_ = self.ridge_.coef_
        self.intercept_ = self.ridge_.intercept_
        self.history_ = None
        return self

    def _features(self, X):
        if self.transformer_ is None:
            return X
        if hasattr(self.transformer_, "transform_codes") and not sp.issparse(X):
            return self.transformer_.transform_codes(X)
        Phi = self.transformer_.transform(X)
        if sp.issparse(Phi):
            return sp.csr_matrix(Phi, dtype=np.float64)
        return np.asarray(Phi, dtype=np.float64)

    def predict(self, X):
        r"""Predict :math:`\mathbf w^T \phi(x) (+ b)`."""
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, dtype=np.float64, accept_sparse=self._accepts_sparse()
        )
        return self._features(X) @ self.coef_.T + self.intercept_

    def _accepts_sparse(self):
        # φ(x) = x passes a sparse X straight to the sparse solver; a kernel's finite feature
        # map needs dense rows, and a transformer says for itself whether it takes sparse X.
        return False if isinstance(self.transformer, Kernel) else "csr"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.input_tags.sparse = self.transformer is None
        return tags
