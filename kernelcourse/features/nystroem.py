r"""The Nyström method: a data-dependent low-rank approximation of the Gram matrix.

Pick m landmark points :math:`\hat x_1, \dots, \hat x_m` among the N training points, form their
kernel matrix :math:`\hat K = [k(\hat x_i, \hat x_j)]_{m \times m}` and the cross block
:math:`K_b = [k(x_i, \hat x_j)]_{N \times m}`, and approximate

.. math:: \tilde K = K_b \hat K^{+} K_b^T ,

with :math:`\hat K^{+}` the Moore–Penrose pseudo-inverse. With the eigendecomposition
:math:`\hat K = \hat V \hat D \hat V^T` truncated to its r largest eigenvalues, the feature map

.. math:: z(x) = \hat D_r^{-1/2} \hat V_r^T \, [k(x, \hat x_1), \dots, k(x, \hat x_m)]^T
          \in \mathbb R^r

gives :math:`z(x_i)^T z(x_j) = \tilde K_{ij}` (for r = rank K̂), so a linear model on z is the
kernel model restricted to the span of :math:`k(\hat x_j, \cdot)`. Storage O(Nr), time O(Nmd +
Nmr + m³) instead of O(N²) and O(N³).

Any rotation Qz of these features gives the same :math:`\tilde K`. :class:`Nystroem` outputs
the one whose map is triangular (see :func:`kernelcourse.devices.nystroem_map`): for K̂ of
full rank, :math:`z(x) = L^{-1} [k(x, \hat x_j)]_j` with :math:`\hat K = LL^T`, which halves
the cost of the N × m × m product and does not depend on the signs of computed eigenvectors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.linalg import get_blas_funcs, solve_triangular
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _array_api, devices
from .._array_api import namespace_of
from .._threads import for_each_row_block
from .._validation import (
    all_finite,
    as_float_matrix,
    as_float_vector,
    check_positive,
    count_constraint,
    find_stack_level,
    gamma_constraint,
    kernel_params_of,
    naming,
    real_constraint,
    validate_data,
)
from ..kernels import KERNEL_NAMES, Kernel, resolve_kernel

__all__ = ["Nystroem", "RankDeficiencyWarning", "ridge_leverage_scores"]

# Rows of X handled per block in transform: the N × m kernel block is never stored whole, and
# a block of ~8 MB stays in cache between the kernel evaluation and the product with the map.
_BLOCK_BYTES = 8 * 2**20


class RankDeficiencyWarning(UserWarning):
    """K̂ is numerically singular: some eigen-directions were dropped by the pseudo-inverse."""


def _kernel_blocks(kernel, X, C, A, dtype):
    """``k(X, C) @ A.T`` (A the r × m map of :func:`~kernelcourse.devices.nystroem_map`),
    computed a block of rows at a time, the blocks shared among threads so that the kernel's
    element-wise passes (exp) run on all CPUs, not only the matrix products.

    With r = m, A is lower triangular: the kernel blocks are written straight into the
    output, and one triangular product (BLAS ``trmm``) turns them into features in place, at
    half the operations of a general product and with no second N × m array. It is one call
    on all of BLAS's threads because scipy's BLAS wrappers hold the GIL: calls from several
    threads would run one at a time."""
    n, (r, m) = len(X), A.shape
    rows = max(64, _BLOCK_BYTES // (np.dtype(dtype).itemsize * max(m, 1)))
    out = np.empty((n, r), dtype=dtype)
    # the part of the kernel that depends on the landmarks alone is computed once
    kernel_rows = kernel._against(C)
    if r < m:
        W_T = np.ascontiguousarray(A.T)

        def work(start, stop):
            block = np.empty((stop - start, m), dtype=dtype)
            kernel_rows(X[start:stop], block)
            np.matmul(block, W_T, out=out[start:stop])

        for_each_row_block(n, rows, work)
        return out
    for_each_row_block(n, rows, lambda start, stop: kernel_rows(X[start:stop], out[start:stop]))
    trmm = get_blas_funcs("trmm", dtype=dtype)
    # featuresᵀ = A K_bᵀ, where K_bᵀ is the output itself read in column order
    result = trmm(1.0, np.asfortranarray(A), out.T, side=0, lower=1, overwrite_b=1)
    if not np.shares_memory(result, out):  # a BLAS wrapper that copied after all
        out[...] = result.T
    return out


def _landmark_map(kernel, basis, rank, eps):
    """:func:`~kernelcourse.devices.nystroem_map` of the landmarks' kernel matrix, in
    float64."""
    K_hat = np.asarray(kernel(basis), dtype=np.float64)
    return devices._nystroem_map(K_hat, rank, eps, np, symmetric=True)


def ridge_leverage_scores(Z, diag, ridge):
    r"""Approximate ridge leverage scores :math:`\ell_i(\lambda) = [K (K + N\lambda I)^{-1}]_{ii}`.

    With a low-rank factor :math:`\tilde K = Z Z^T \preceq K` (e.g. a uniform Nyström pilot),

    .. math:: \tilde\ell_i = z_i^T (Z^T Z + N\lambda I)^{-1} z_i
              + \frac{K_{ii} - \|z_i\|^2}{N\lambda},

    the leverage of :math:`\tilde K` plus the unexplained diagonal (Alaoui & Mahoney 2015); it
    over-estimates :math:`\ell_i` by at most the second term.

    Parameters
    ----------
    Z : array of shape (N, r)
    diag : array of shape (N,)
        The diagonal :math:`K_{ii}`.
    ridge : float > 0
        λ.
    """
    Z = as_float_matrix(Z, "Z", allow_float32=False)
    n, r = Z.shape
    diag = as_float_vector(diag, "diag", n)
    if (diag < 0).any():
        raise ValueError("diag holds negative entries; K_ii = K(x_i, x_i) is >= 0 for a kernel.")
    ridge = check_positive(ridge, "ridge")
    mu = n * ridge
    with np.errstate(over="ignore"):  # refused below, by name
        G = Z.T @ Z
    if not np.isfinite(G).all():
        # Z of 1e200: the factor of L went NaN, and scipy's check named no argument
        raise ValueError(
            f"Z has entries of magnitude {float(np.abs(Z).max()):.3g}, and ZᵀZ overflows "
            "floating point; divide Z by some c, and diag and ridge by c² (the scores do "
            "not change)."
        )
    G[np.diag_indices(r)] += mu
    try:
        L = np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        # ZᵀZ singular (dependent columns) and Nλ below its round-off: numpy's bare "Matrix
        # is not positive definite"
        raise ValueError(
            f"ZᵀZ + Nλ I is numerically singular with ridge={ridge!r} (Nλ = {mu:.3g}, largest "
            f"diagonal entry of ZᵀZ {float(np.diag(G).max()):.3g}): Z has dependent columns; "
            "raise ridge."
        ) from None
    # z_iᵀ G⁻¹ z_i = ‖L⁻¹ z_i‖²
    W = solve_triangular(L, Z.T, lower=True)
    residual = np.clip(diag - np.einsum("ij,ij->i", Z, Z), 0, None)
    with np.errstate(over="ignore"):  # refused by name
        scores = np.einsum("ij,ij->j", W, W) + residual / mu
    return _check_scores(scores, ridge)


def _check_scores(scores, ridge):
    """``scores`` after checking that they and their sum are finite. A ridge of 1e-310 made
    (K_ii − ‖z_i‖²)/(Nλ) overflow: the scores were inf (or their sum), and Nystroem's
    sampling probabilities NaN (or all 0), with numpy's bare "overflow encountered"."""
    with np.errstate(over="ignore"):
        total = scores.sum()
    if not np.isfinite(total):
        raise ValueError(
            f"ridge={ridge!r} is so small that the leverage scores' diagonal term "
            "(K_ii − ‖z_i‖²)/(Nλ) overflows floating point; raise ridge."
        )
    return scores


def _effective_ridge(Z, diag, target):
    """λ for which the approximate effective dimension Σᵢ ℓ̃ᵢ(λ) equals ``target`` (bisection)."""
    n = len(Z)
    s = np.clip(np.linalg.eigvalsh(Z.T @ Z), 0, None)
    residual = float(np.clip(diag - np.einsum("ij,ij->i", Z, Z), 0, None).sum())
    trace = float(diag.sum())

    def d_eff(log_mu):
        mu = math.exp(log_mu)
        return float(np.sum(s / (s + mu))) + residual / mu

    lo, hi = math.log(trace * 1e-14 + 1e-300), math.log(trace + 1e-300)
    if d_eff(lo) <= target:
        return math.exp(lo) / n
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if d_eff(mid) > target:
            lo = mid
        else:
            hi = mid
    return math.exp(hi) / n


class Nystroem(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Nyström feature map :math:`z(x) = \hat D_r^{-1/2}\hat V_r^T [k(x, \hat x_j)]_{j=1}^m`.

    The inner products of the features reproduce :math:`\tilde K = K_b \hat K^{+} K_b^T`
    (Williams & Seeger 2001; Drineas & Mahoney 2005; :doc:`chapter 9 </book/09_nystroem_vs_rff>`).
    Unlike random Fourier features, the basis functions :math:`k(\hat x_j, \cdot)` are drawn from
    the data, so they adapt to where the data lie.

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        One of ``kernelcourse.kernels.KERNEL_NAMES`` or a :class:`~kernelcourse.kernels.Kernel`.
    gamma : float > 0, "scale", array-like of shape (n_features,) or None, default=None
        γ of the "rbf", "laplacian" or "polynomial" kernel; None means 1 / n_features and
        "scale" 1 / (n_features · Var X), the variance of all the entries of X (as
        scikit-learn's ``SVC``). An array gives the RBF kernel one γ_k per feature.
    n_components : int >= 1, default=100
        Number m of landmarks. If m > N, m = N is used (with a warning).
    rank : int >= 1 or None, default=None
        Keep only the r largest eigenvalues of :math:`\hat K` (the rank-r map of chapter 9);
        None keeps every numerically non-zero one.
    sampling : {"uniform", "leverage"}, default="uniform"
        How landmarks are drawn: uniformly without replacement (Williams & Seeger's choice), or in
        proportion to approximate ridge leverage scores :math:`\ell_i(\lambda)`, estimated from a
        uniform Nyström pilot of the same size (see :func:`ridge_leverage_scores`); uniformly
        again where every score is 0 (a kernel that vanishes on the data).
    ridge : float > 0 or None, default=None
        λ of the leverage scores (``sampling="leverage"`` only); None picks λ so that the
        estimated effective dimension :math:`\sum_i \ell_i(\lambda)` equals m.
    random_state : int, RandomState instance or None, default=None
        Seeds the choice of landmarks.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel (``degree``, ``coef0``, ``nu``, ``length_scale``).

    Attributes
    ----------
    components_ : ndarray of shape (m, n_features)
        The landmarks :math:`\hat x_j`.
    component_indices_ : ndarray of shape (m,)
        Their row indices in the training data.
    eigenvalues_ : ndarray of shape (r,)
        The kept eigenvalues :math:`\hat D_r` of :math:`\hat K`, in decreasing order.
    normalization_ : ndarray of shape (r, m)
        The map A, ``transform(X) = K_b @ normalization_.T``, with :math:`A^TA = \hat K_r^+`
        (the pseudo-inverse of K̂ restricted to its r leading eigenvectors): :math:`\hat
        D_r^{-1/2}\hat V_r^T` turned by an orthogonal r × r matrix so that its last r
        columns are lower triangular with a positive diagonal. For r = m it is
        :math:`L^{-1}` with :math:`\hat K = LL^T`, and the features of the landmarks are L.
    rank_ : int
        Number r of output features.
    kernel_ : Kernel
        The resolved kernel.
    leverage_scores_ : ndarray of shape (N,)
        Approximate ridge leverage scores (``sampling="leverage"`` only).
    ridge_ : float
        The λ they were computed with (``sampling="leverage"`` only).
    n_features_in_ : int

    See Also
    --------
    kernelcourse.features.RandomFourierFeatures
        Data-independent features for shift-invariant kernels.
    kernelcourse.scale.NystroemKRR
        Kernel ridge regression on Nyström centres, solved by FALKON.

    Notes
    -----
    :math:`\hat K` is eigen-decomposed in float64 (``eigh``, about three times cheaper than the
    SVD of the same symmetric matrix), and eigenvalues at or below :math:`m\,\varepsilon\,
    \lambda_{\max}` are treated as zero — numpy's rule for pseudo-inverses, with ε the machine
    epsilon of the input's dtype. Duplicate landmarks or a fast-decaying spectrum make
    :math:`\hat K` rank-deficient; the pseudo-inverse then drops those directions (warning with
    the condition number) instead of dividing by round-off. float32 input keeps float32 output,
    and the O(Nmd + Nmr) products run in float32.

    The features are those of :math:`\hat D_r^{-1/2}\hat V_r^T` up to an orthogonal rotation.
    A rotation changes no inner product :math:`z(x)^Tz(y)`, so no model fitted with a
    :math:`\|w\|^2` penalty (ridge, SVM) and no PCA; scikit-learn's features differ by
    another rotation (its map is the symmetric :math:`\hat K^{-1/2}`). The triangular map
    makes ``transform`` about twice as fast: :math:`Nm^2` operations for the product instead
    of :math:`2Nm^2`.

    Sampling landmarks with probabilities :math:`p_i` needs no rescaling here: multiplying the
    columns of :math:`K_b` by any non-zero weights leaves :math:`K_b \hat K^+ K_b^T` unchanged.

    References
    ----------
    T. Yang, Y.-F. Li, M. Mahdavi, R. Jin and Z.-H. Zhou, "Nyström method vs random Fourier
    features: a theoretical and empirical comparison", NIPS 2012.
    C. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines", NIPS 2001.
    P. Drineas and M. W. Mahoney, "On the Nyström method for approximating a Gram matrix for
    improved kernel-based learning", JMLR 6, 2005.
    T. Yang, Y.-F. Li, M. Mahdavi, R. Jin and Z.-H. Zhou, "Nyström method vs random Fourier
    features: a theoretical and empirical comparison", NIPS 2012.
    A. El Alaoui and M. W. Mahoney, "Fast randomized kernel ridge regression with statistical
    guarantees", NIPS 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import Nystroem
    >>> from kernelcourse.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(300, 2))
    >>> ny = Nystroem(gamma=1.0, n_components=60, random_state=0).fit(X)
    >>> Z = ny.transform(X)
    >>> print(Z.shape)
    (300, 60)
    >>> print(round(float(np.abs(Z @ Z.T - RBF(gamma=1.0)(X)).mean()), 3))
    0.0
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"poly", "gaussian"}), Kernel],
        "gamma": gamma_constraint(per_feature=True),
        "n_components": [count_constraint()],
        "rank": [count_constraint(), None],
        "sampling": [StrOptions({"uniform", "leverage"})],
        "ridge": [real_constraint(0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "kernel_params": [dict, None],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        n_components=100,
        rank=None,
        sampling="uniform",
        ridge=None,
        random_state=None,
        kernel_params=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.rank = rank
        self.sampling = sampling
        self.ridge = ridge
        self.random_state = random_state
        self.kernel_params = kernel_params

    def _resolve_kernel(self, X):
        return resolve_kernel(
            self.kernel,
            gamma=self.gamma,
            n_features=X.shape[1],
            X=X,
            **kernel_params_of(self.kernel_params),
        )

    def fit(self, X, y=None):
        """Choose the m landmarks and eigen-decompose their kernel matrix K̂.

        Parameters
        ----------
        X : array-like of shape (N, n_features)
        y : ignored

        Returns
        -------
        self
        """
        xp = namespace_of(X)
        if xp is not None and self.sampling == "leverage":  # scores computed on the host
            names = ("components_", "component_indices_", "eigenvalues_", "normalization_")
            names += ("leverage_scores_",)
            X = validate_data(self, X, dtype=[xp.float64, xp.float32])
            self._fit_host(devices.host_copy(X, whole=True))
            fitted = {name: getattr(self, name) for name in names}
            vars(self).update(devices.to_device(fitted, xp, _array_api.device_of(X)))
            return self
        self._validate_params()
        if xp is not None:
            X = validate_data(self, X, dtype=[xp.float64, xp.float32])
            kernel = self._resolve_kernel(X)
            rng = check_random_state(self.random_state)
            fitted = devices.nystroem_fit(self, X, xp, rng, kernel, RankDeficiencyWarning)
            vars(self).update(fitted)
            return self
        return self._fit_host(X)

    def _fit_host(self, X):
        """:meth:`fit` on numpy (or array-like) X."""
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        kernel = self._resolve_kernel(X)
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        m = self.n_components
        if m > n:
            warnings.warn(
                f"n_components={m} is larger than the number of samples N={n}; using m = N "
                "(the exact kernel, at the full O(N³) cost).",
                UserWarning,
                stacklevel=find_stack_level(),
            )
            m = n
        eps = float(np.finfo(X.dtype).eps)
        if self.sampling == "uniform":
            indices = rng.permutation(n)[:m]
        else:
            # Pilot: a uniform Nyström map of the same size gives K̃ = ZZᵀ for the scores.
            pilot = rng.permutation(n)[:m]
            _, pilot_map, _ = _landmark_map(kernel, X[pilot], None, eps)
            Z = _kernel_blocks(kernel, X, X[pilot], pilot_map.astype(X.dtype), X.dtype)
            Z = Z.astype(np.float64, copy=False)
            diag = np.asarray(kernel.diag(X), dtype=np.float64)
            ridge = self.ridge if self.ridge is not None else _effective_ridge(Z, diag, m)
            if Z.shape[1]:
                scores = ridge_leverage_scores(Z, diag, ridge)
            else:
                # the pilot's K̂ is numerically zero (rank 0): K̃ = 0 and the scores are the
                # diagonal term alone (ridge_leverage_scores refused the empty Z, naming it)
                with np.errstate(over="ignore"):  # refused by name
                    scores = _check_scores(np.clip(diag, 0, None) / (n * ridge), ridge)
            total = scores.sum()
            # a kernel that vanishes on X (values that underflow) has no scores to weigh
            # by: draw uniformly, where 0/0 made every probability NaN
            p = scores / total if total > 0 else np.full(n, 1.0 / n)
            p = np.maximum(p, 1e-12 / n)
            # Efraimidis–Spirakis: the m largest u_i^(1/p_i) are a weighted sample without
            # replacement (no duplicate landmarks, so K̂ stays non-singular).
            keys = np.log(rng.uniform(size=n)) / p
            indices = np.argpartition(-keys, m - 1)[:m] if m < n else np.arange(n)
            indices = indices[np.argsort(-keys[indices], kind="stable")]
            self.leverage_scores_ = scores
            self.ridge_ = float(ridge)
        basis = X[indices]
        evals, normalization, info = _landmark_map(kernel, basis, self.rank, eps)
        if info["n_keep"] < m:
            warnings.warn(
                devices.rank_deficiency_message(m, info),
                RankDeficiencyWarning,
                stacklevel=find_stack_level(),
            )
        self.kernel_ = kernel
        self.components_ = basis
        self.component_indices_ = np.asarray(indices)
        self.eigenvalues_ = evals
        self.normalization_ = normalization.astype(X.dtype)
        self.rank_ = len(evals)
        self._n_features_out = self.rank_
        return self

    def transform(self, X):
        r"""Map X to :math:`z(X) = K_b \hat V_r \hat D_r^{-1/2}`, shape (N, r).

        The kernel block :math:`K_b` is computed and multiplied by the map a few thousand rows
        at a time, so memory stays O(N r) and each block is reused while in cache.
        """
        check_is_fitted(self)
        xp = namespace_of(X, fitted=self.components_, called=(self, "transform"))
        if xp is not None:
            X = validate_data(self, X, dtype=[xp.float64, xp.float32], reset=False)
            return devices.nystroem_transform(self, X, xp)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        with np.errstate(over="ignore"):  # landmarks beyond float32: see below
            C = self.components_.astype(X.dtype, copy=False)
        if not all_finite(C):
            # float32 X on a float64 fit whose landmarks exceed float32's range: they became
            # infinite and the kernel refused "Y", a name the caller never passed. Compute
            # in the fit's dtype; the features, bounded by √k(x, x), fit X's dtype.
            C = self.components_
            Z = _kernel_blocks(self.kernel_, X.astype(C.dtype), C, self.normalization_, C.dtype)
            return Z.astype(X.dtype)
        A = self.normalization_.astype(X.dtype, copy=False)
        return _kernel_blocks(self.kernel_, X, C, A, X.dtype)

    def approximate_kernel(self, X, Y=None):
        r""":math:`\tilde K(X, Y) = z(X) z(Y)^T`, i.e. K_b K̂⁺ K_bᵀ (chapter 9)."""
        ZX = self.transform(X)
        ZY = ZX if Y is None else naming("Y", self.transform, Y)
        return ZX @ ZY.T

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.array_api_support = True
        return tags
