r"""Kernel ridge regression when the n × n Gram matrix does not fit: Nyström + FALKON, streaming.

Lecture 002 puts the problem in one line: at :math:`n = 10^6` the kernel matrix alone takes
:math:`8 n^2` bytes = 8 TB, and the direct solve :math:`\alpha = (\mathbf K + \lambda I)^{-1} y`
costs :math:`O(n^3)`. This module holds two ways around it.

* :class:`NystroemKRR` (and :class:`NystroemKRRClassifier`) restrict the solution to the span of
  M centres :math:`\tilde x_1, \dots, \tilde x_M` drawn from the data,
  :math:`f(x) = \sum_{j=1}^M \alpha_j K(x, \tilde x_j)`, and solve the resulting M × M normal
  equations

  .. math:: (K_{nM}^T K_{nM} + \lambda n K_{MM})\,\alpha = K_{nM}^T y

  by conjugate gradient with the FALKON preconditioner (Rudi, Carratino & Rosasco 2017): with
  :math:`T = \operatorname{chol}(K_{MM})` and :math:`A = \operatorname{chol}(T T^T / M + \lambda I)`
  the preconditioned system is well conditioned when M is of order 1/λ up to log factors, so the
  number of iterations does not grow with n (about ten to reach 1e-6 at λ = 1/√n, M = 2√n on
  Covertype); outside that regime it does. Without ``precompute`` every iteration
  needs one product :math:`v \mapsto K_{nM}^T K_{nM} v`, computed over row blocks of
  :math:`K_{nM}` whose size is capped in megabytes; the n × n (or even n × M) matrix is never
  stored. Memory: O(M² + block); time: O(n M d) per iteration.

* :class:`StreamingFeatureRidge` is strategy ⑤ of lecture 000 applied to ridge regression: a
  fixed approximate feature map ψ (random Fourier features, Nyström, ...) is applied to one block of
  rows at a time, and only :math:`Z^T Z` (D × D) and :math:`Z^T y` are kept, so ``partial_fit``
  can stream a data set larger than memory.
"""

from __future__ import annotations

import copy
import math
import numbers
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
    clone,
)
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.kernel_approximation import RBFSampler, SkewedChi2Sampler
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _array_api, devices
from ._array_api import namespace_of
from ._progress import Progress
from ._validation import (
    check_fit_input,
    check_positive,
    check_weights,
    finite_gram,
    validate_data,
)
from .features import RandomFourierFeatures
from .kernels import KERNEL_NAMES, Kernel, resolve_kernel
from .ridge import preconditioned_cg, solve_regularized_psd

__all__ = [
    "NystroemKRR",
    "NystroemKRRClassifier",
    "StreamingFeatureRidge",
    "ProgressPrinter",
    "conjugate_gradient",
    "exact_krr_cost",
]


# -- progress readout ------------------------------------------------------------------------------
class ProgressPrinter:
    """A callback that prints ``iteration, relative residual, elapsed time`` for long fits.

    Pass it as ``callback=ProgressPrinter()`` or set ``verbose=True`` on the estimator. It is called
    as ``callback(iteration, alpha, residual)`` after every conjugate-gradient step.
    """

    def __init__(self, file=None, every=1):
        self.file = file
        self.every = every
        self._start = None

    def __call__(self, iteration, alpha, residual):
        now = time.perf_counter()
        if self._start is None or iteration <= 1:
            self._start = now
        if iteration % self.every == 0:
            print(
                f"iteration {iteration:3d}  relative residual {residual:.3e}  "
                f"elapsed {now - self._start:.1f} s",
                file=self.file or sys.stdout,
                flush=True,
            )


def _progress_callback(callback, verbose, progress, tol):
    """The CG callback of an estimator: the user's ``callback``, plus a line per iteration
    (a :class:`ProgressPrinter`) at ``verbose >= 1``, or the default's time-based line."""
    if verbose:
        printer = ProgressPrinter()
    elif progress:

        def printer(it, alpha, residual):
            if progress.due():
                progress.report(
                    f"CG iteration {it}: relative residual {residual:.3e} (tol {tol:g})"
                )

    else:
        return callback
    if callback is None:
        return printer

    def both(it, alpha, residual):
        callback(it, alpha, residual)
        printer(it, alpha, residual)

    return both


# -- conjugate gradient ----------------------------------------------------------------------------
def conjugate_gradient(matvec, b, *, maxiter=20, tol=1e-7, callback=None):
    r"""Solve :math:`H x = b` for symmetric positive definite H given only ``matvec(v) = H v``.

    ``b`` may hold several right-hand sides as columns; each column runs its own CG recursion (its
    own step sizes), but all columns share one call of ``matvec`` per iteration, which is what
    matters when one product is a pass over the data.

    Numerical trouble is reported, not hidden: a search direction p with
    :math:`p^T H p < 0` (beyond round-off) raises, since H is then not positive definite and
    CG does not apply; and a relative residual still above ``tol`` after ``maxiter``
    iterations warns (:class:`~sklearn.exceptions.ConvergenceWarning`).

    Parameters
    ----------
    matvec : callable
        ``matvec(V)`` returns H V for an (n, k) array V (k columns at once).
    b : array-like of shape (n,) or (n, k)
    maxiter : int >= 1, default=20
    tol : float >= 0, default=1e-7
        Stop once the relative residual :math:`\|b - Hx\| / \|b\|` of every column is below.
    callback : callable or None
        Called as ``callback(iteration, x, relative_residual)`` after every step.

    Returns
    -------
    x : ndarray, shape of ``b``
    history : list of float
        Relative residual :math:`\max_j \|b_j - H x_j\| / \|b_j\|` after each iteration
        (``history[0] = 1`` is the starting point x = 0).

    Raises
    ------
    TypeError, ValueError
        If an argument is of the wrong type or out of range (the error names it), or if
        ``matvec`` returns the wrong shape, NaN or infinity, or shows H is not positive
        definite.
    """
    if not callable(matvec):
        raise TypeError(f"matvec must be a callable returning H @ V, got {matvec!r}.")
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be None or callable, got {callback!r}.")
    if isinstance(maxiter, bool) or not isinstance(maxiter, numbers.Integral) or maxiter < 1:
        raise ValueError(f"maxiter must be an integer >= 1, got {maxiter!r}.")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 <= tol < np.inf:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}.")
    b_arr = np.asarray(b)
    if b_arr.dtype == object or not np.issubdtype(b_arr.dtype, np.number):
        raise TypeError(f"b must be a numeric array, got dtype {b_arr.dtype}.")
    if np.iscomplexobj(b_arr):
        raise TypeError(f"b must be real-valued, got dtype {b_arr.dtype}.")
    if b_arr.ndim not in (1, 2) or b_arr.size == 0:
        raise ValueError(f"b must be a non-empty array of shape (n,) or (n, k), got {b_arr.shape}.")
    if not np.isfinite(b_arr).all():
        raise ValueError("b contains NaN or infinity.")
    x, history = _conjugate_gradient(matvec, b_arr, int(maxiter), float(tol), callback)
    if history[-1] > tol:
        warnings.warn(
            f"conjugate_gradient did not reach tol={tol:g} in maxiter={maxiter} iterations: "
            f"relative residual ‖b − Hx‖/‖b‖ = {history[-1]:.3g}; raise maxiter.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return x, history


def _conjugate_gradient(matvec, b, maxiter, tol, callback):
    """:func:`conjugate_gradient` on checked input, without the convergence warning."""
    b = np.asarray(b, dtype=np.float64)
    vector = b.ndim == 1
    B = b[:, None] if vector else b
    X = np.zeros_like(B)
    R = B.copy()
    P = R.copy()
    bnorm = np.linalg.norm(B, axis=0)
    bnorm[bnorm == 0] = 1.0
    rs = np.einsum("ij,ij->j", R, R)
    history = [float(np.max(np.sqrt(rs) / bnorm))]
    for it in range(1, maxiter + 1):
        if history[-1] <= tol:
            break
        HP = np.asarray(matvec(P), dtype=np.float64)
        if HP.shape != P.shape:
            HP = HP.reshape(P.shape) if HP.size == P.size else HP
        if HP.shape != P.shape:
            raise ValueError(
                f"matvec returned shape {HP.shape} for an input of shape {P.shape}; it must "
                "return H @ V of the same shape."
            )
        if not np.isfinite(HP).all():
            raise ValueError(f"matvec returned NaN or infinity at iteration {it}.")
        pHp = np.einsum("ij,ij->j", P, HP)
        # pᵀHp < 0 beyond round-off: H is not positive definite and CG's step is meaningless.
        slack = 10 * len(P) * 2.2e-16 * np.linalg.norm(P, axis=0) * np.linalg.norm(HP, axis=0)
        bad = pHp < -slack
        if bad.any():
            j = int(np.argmax(bad))
            raise ValueError(
                f"matvec is not positive definite: pᵀHp = {pHp[j]:.3g} < 0 for a search "
                f"direction at iteration {it}; conjugate gradients need a symmetric positive "
                "definite H."
            )
        # A column that has converged exactly (p = 0) stays where it is.
        step = np.divide(rs, pHp, out=np.zeros_like(rs), where=pHp > 0)
        X += step * P
        R -= step * HP
        rs_new = np.einsum("ij,ij->j", R, R)
        beta = np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs > 0)
        P = R + beta * P
        rs = rs_new
        history.append(float(np.max(np.sqrt(rs) / bnorm)))
        if callback is not None:
            callback(it, X[:, 0] if vector else X, history[-1])
    return (X[:, 0] if vector else X), history


def exact_krr_cost(n, *, itemsize=8, flops_per_second=1e10):
    r"""Memory (bytes) and time (seconds) of exact kernel ridge regression on n points.

    Storing :math:`\mathbf K` takes :math:`\text{itemsize}\cdot n^2` bytes (8 TB at n = 10⁶ in
    float64, lecture 002) and a Cholesky solve takes :math:`n^3/3` floating-point operations.
    """
    arr = np.asarray(n)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"n must be a number of points (or an array of them), got {n!r}.")
    n = arr.astype(np.float64)
    if not (np.isfinite(n).all() and (n >= 0).all()):
        raise ValueError(f"n must be finite and >= 0, got {arr!r}.")
    itemsize = check_positive(itemsize, "itemsize")
    flops_per_second = check_positive(flops_per_second, "flops_per_second")
    return itemsize * n**2, n**3 / 3 / flops_per_second


# -- Nyström kernel ridge regression solved by FALKON ----------------------------------------------
def _cholesky_upper(K, name, eps=2.220446049250313e-16):
    """Upper Cholesky factor with the smallest diagonal shift (from M·ε·max K_ii on, times
    100 per retry) that makes it succeed."""
    M = len(K)
    shift = eps * M * max(1.0, float(np.max(np.diag(K))))
    for _ in range(12):
        try:
            return linalg.cholesky(K + shift * np.eye(M), lower=False), shift
        except linalg.LinAlgError:
            shift *= 100
    raise linalg.LinAlgError(
        f"{name} is not positive definite even after adding {shift:.1e}·I; "
        "is the kernel positive semidefinite?"
    )


def _host_weights(sample_weight, n):
    """:func:`check_weights` for X on another device. The weights stay on the host, where
    they choose the support and the centres; the fit sends them to X's device."""
    if sample_weight is None:
        return None
    if namespace_of(sample_weight) is not None:
        sample_weight = _array_api.to_numpy(sample_weight)
    return check_weights(sample_weight, np.empty((n, 0)))


# block_memory=None on the host: 256 MB blocks of K_nM (on an accelerator: half its free memory)
_HOST_BLOCK_MB = 256


class _BaseNystroemKRR(BaseEstimator):
    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"poly", "gaussian"}), Kernel],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "lam": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_centers": [Interval(numbers.Integral, 1, None, closed="left")],
        "maxiter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "preconditioner": [StrOptions({"falkon"}), None],
        "precompute": ["boolean"],
        "block_memory": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "dtype": [StrOptions({"float32", "float64"})],
        "random_state": ["random_state"],
        "callback": [callable, None],
        "verbose": ["verbose", None],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        lam=1e-6,
        n_centers=500,
        maxiter=20,
        tol=1e-7,
        preconditioner="falkon",
        precompute=False,
        block_memory=None,
        dtype="float64",
        random_state=None,
        callback=None,
        verbose=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.lam = lam
        self.n_centers = n_centers
        self.maxiter = maxiter
        self.tol = tol
        self.preconditioner = preconditioner
        self.precompute = precompute
        self.block_memory = block_memory
        self.dtype = dtype
        self.random_state = random_state
        self.callback = callback
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True
        return tags

    # -- blocks of K_nM --------------------------------------------------------------------------
    def _block_rows(self, M):
        itemsize = np.dtype(self.dtype).itemsize
        block_memory = _HOST_BLOCK_MB if self.block_memory is None else self.block_memory
        # a block of K_nM plus its distance temporaries: about two M-wide arrays per row
        return max(1, int(block_memory * 2**20 // (2 * M * itemsize)))

    def _kernel_blocks(self, X, progress=None):
        rows = self._block_rows(len(self.centers_))
        for start in range(0, len(X), rows):
            if progress and progress.due():  # a pass over a large X can itself take minutes
                progress.report(f"pass over the data: {start} of {len(X)} rows")
            yield start, self.kernel_(X[start : start + rows], self.centers_)

    def _knm_t_knm(self, X, V, sw=None, progress=None):
        """K_nM^T S (K_nM V), one block of rows of K_nM at a time (S = diag(sample weights))."""
        out = np.zeros((len(self.centers_), V.shape[1]))
        for start, Kb in self._kernel_blocks(X, progress):
            # float32 blocks, float64 products: V (and y) rounded to float32 put an error of
            # ε₃₂‖K‖‖V‖ into every product, which 1/λ then magnifies far beyond the
            # rounding of K itself.
            Kb = Kb.astype(np.float64, copy=False)
            KV = Kb @ V
            if sw is not None:
                KV *= sw[start : start + len(Kb), None].astype(Kb.dtype, copy=False)
            out += Kb.T @ KV
        return out

    def _knm_t_y(self, X, Y, progress=None):
        out = np.zeros((len(self.centers_), Y.shape[1]))
        for start, Kb in self._kernel_blocks(X, progress):
            out += Kb.T.astype(np.float64) @ Y[start : start + len(Kb)]
        return out

    def _gram_pass(self, X, Y, M, sw=None, progress=None):
        """K_nM^T S K_nM and K_nM^T Y in one pass over the data (symmetric rank-k updates)."""
        H = np.zeros((M, M))
        KtY = np.zeros((M, Y.shape[1]))
        for start, Kb in self._kernel_blocks(X, progress):
            # dsyrk fills the upper triangle of Kb^T Kb. It runs in float64 even for float32
            # blocks: H summed in float32 loses definiteness and CG then diverges.
            Kw = np.asfortranarray(Kb, dtype=np.float64)
            KtY += Kw.T @ Y[start : start + len(Kb)]  # float64, as in _knm_t_y
            if sw is not None:
                Kw *= np.sqrt(sw[start : start + len(Kb), None])
            H += linalg.blas.dsyrk(1.0, Kw, trans=1)
        return np.triu(H) + np.triu(H, 1).T, KtY

    def _choose_centers(self, X, M, rng, rows=None):
        """M distinct rows of X, drawn uniformly: the first draw is ``rng.choice(n, M)`` as
        always, and only repeated rows are replaced by further draws. Repeated centres make
        K_MM singular, and its Cholesky factor in the preconditioner then amplifies round-off
        until CG diverges. ``rows(idx)`` returns those rows of X as a numpy array (for X on
        another device only the candidate rows come to the host); None means ``X[idx]``."""
        if rows is None:

            def rows(i):
                return X[i]

        n = X.shape[0]
        idx = rng.choice(n, size=M, replace=False)
        _, first = np.unique(rows(idx), axis=0, return_index=True)
        if len(first) == M:
            return np.sort(idx)
        keep = idx[np.sort(first)]
        rest = np.setdiff1d(np.arange(n), idx)
        rest = rest[rng.permutation(len(rest))]
        chunk = M
        while len(keep) < M and len(rest):
            candidates = np.concatenate([keep, rest[:chunk]])
            rest = rest[chunk:]
            _, first = np.unique(rows(candidates), axis=0, return_index=True)
            keep = candidates[np.sort(first)][:M]
            chunk *= 2
        if len(keep) < M:
            warnings.warn(
                f"n_centers={M} but X has only {len(keep)} distinct rows; using those "
                f"{len(keep)} as centres (repeated centres add nothing to the span of "
                "K(·, x̃) and make K_MM singular).",
                UserWarning,
                stacklevel=4,
            )
        return np.sort(keep)

    def _fit_targets(self, X, Y, sw=None, xp=None):
        n, d = X.shape
        rng = check_random_state(self.random_state)
        M = self.n_centers
        if sw is not None:
            # Points of weight zero do not count: centres come from the others, and the
            # normal equations are those of the weighted risk (1/Σs) Σ s_i (f(x_i) − y_i)².
            support = np.flatnonzero(sw > 0)
            if xp is None:
                X, Y = X[support], Y[support]
            else:
                take = _array_api.from_numpy(support, xp, _array_api.device_of(X))
                X, Y = xp.take(X, take, axis=0), xp.take(Y, take, axis=0)
            sw = sw[support]
            n = len(support)
        if M > n:
            warnings.warn(
                f"n_centers={M} > n_samples={n}; using all {n} points as centres.",
                UserWarning,
                stacklevel=3,
            )
            M = n
        self.kernel_ = resolve_kernel(self.kernel, gamma=self.gamma, n_features=d)
        progress = Progress(f"{type(self).__name__}.fit", self.verbose)
        callback = _progress_callback(self.callback, self.verbose, progress, self.tol)
        if xp is not None:  # array-API input: blocks, preconditioner and CG on X's device
            device = _array_api.device_of(X)

            def host_rows(i):  # the candidate centres, as the numpy path sees them
                rows = xp.take(X, _array_api.from_numpy(i, xp, device), axis=0)
                return _array_api.to_numpy(rows).astype(self.dtype, copy=False)

            idx = self._choose_centers(X, M, rng, host_rows)
            devices.nystroem_krr_fit(
                self, X, Y, xp, idx, callback, sample_weight=sw, progress=progress
            )
            if sw is not None:
                self.center_indices_ = _array_api.from_numpy(support[idx], xp, device)
            residual = float(self.history_[-1])
            if residual > self.tol:
                warnings.warn(
                    f"{type(self).__name__} did not reach tol={self.tol:g} in "
                    f"{self.n_iter_} conjugate-gradient iterations: relative residual of the "
                    f"preconditioned system {residual:.3g}; raise maxiter (or tol).",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            self._finish_progress(progress)
            return self
        X = X.astype(self.dtype, copy=False)
        idx = self._choose_centers(X, M, rng)
        M = len(idx)
        self.center_indices_ = idx if sw is None else support[idx]
        self.centers_ = X[idx]
        self.y_mean_ = np.average(Y, axis=0, weights=sw)
        Yc = Y - self.y_mean_
        if sw is not None:
            Yc = Yc * sw[:, None]
        n_eff = n if sw is None else float(sw.sum())
        lam = float(self.lam)

        KMM = np.asarray(finite_gram(self.kernel_, self.centers_, name="the centres"), np.float64)
        self._KMM_shift = None
        if self.preconditioner == "falkon":
            # T^T T = K_MM, A^T A = T T^T / M + λ I  (Rudi, Carratino & Rosasco 2017, Alg. 1),
            # with a jitter of M·ε·max K_ii (ε of the blocks' dtype) on K_MM, as FALKON does.
            eps = float(np.finfo(np.dtype(self.dtype)).eps)
            T, self._KMM_shift = _cholesky_upper(KMM, "K_MM", eps)
            A, _ = _cholesky_upper(T @ T.T / M + lam * np.eye(M), "T T^T / M + λI")

            def apply_B(U):  # B U = T^{-1} A^{-1} U / √n
                return linalg.solve_triangular(
                    T, linalg.solve_triangular(A, U, lower=False), lower=False
                ) / np.sqrt(n_eff)

            def apply_Bt(U):  # B^T U = A^{-T} T^{-T} U / √n
                return linalg.solve_triangular(
                    A,
                    linalg.solve_triangular(T, U, lower=False, trans="T"),
                    lower=False,
                    trans="T",
                ) / np.sqrt(n_eff)
        else:

            def apply_B(U):
                return U / np.sqrt(n_eff)

            apply_Bt = apply_B

        # right-hand side K_nM^T S y and the product v -> (K_nM^T S K_nM + λ n K_MM) v
        if self.precompute:
            # one pass: H = K_nM^T K_nM (M × M, O(n M²) flops), then CG costs no data passes
            H, KtY = self._gram_pass(X, Yc, M, sw, progress)
            H += lam * n_eff * KMM
            # form B^T H B once (O(M^3)); each CG step is then one M × M product
            BHB = apply_Bt(H @ apply_B(np.eye(M)))
            BHB = (BHB + BHB.T) / 2

            def matvec(U):
                return BHB @ U

        else:
            KtY = self._knm_t_y(X, Yc, progress)

            def matvec(U):
                V = apply_B(U)
                return apply_Bt(self._knm_t_knm(X, V, sw, progress) + lam * n_eff * (KMM @ V))

        if not np.isfinite(KtY).all():
            raise ValueError(
                f"the kernel {self.kernel_!r} gives NaN or infinity between X and the centres "
                "(X too large in magnitude for this kernel?); rescale X."
            )
        rhs = apply_Bt(KtY)

        user_cb = callback
        coef_cb = None
        if user_cb is not None:

            def coef_cb(it, beta, res):  # report the coefficients α = B β, not β
                user_cb(it, apply_B(beta), res)

        beta, history = _conjugate_gradient(
            matvec, rhs, int(self.maxiter), float(self.tol), coef_cb
        )
        # CG's residual is a recursion that round-off can carry away from the truth (a nearly
        # singular K_MM does); one more product measures the real one.
        true = rhs - matvec(beta)
        rnorm = np.linalg.norm(rhs, axis=0)
        self.residual_ = float(
            np.max(np.linalg.norm(true, axis=0) / np.where(rnorm > 0, rnorm, 1.0))
        )
        # The product itself runs in the blocks' dtype, so the measured residual is only good
        # to about √ε of it; beyond that and 100× what the recursion claims, CG has drifted.
        floor = 10 * math.sqrt(float(np.finfo(np.dtype(self.dtype)).eps))
        if not self.residual_ <= max(100 * max(history[-1], self.tol), floor):
            warnings.warn(
                f"{type(self).__name__}: conjugate gradients drifted: the relative residual "
                f"of the preconditioned system is {self.residual_:.3g} although the CG "
                f"recursion reported {history[-1]:.3g}; round-off took over (K_MM is nearly "
                "singular). Raise lam, use fewer centres or dtype='float64'.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif history[-1] > self.tol:
            warnings.warn(
                f"{type(self).__name__} did not reach tol={self.tol:g} in "
                f"{len(history) - 1} conjugate-gradient iterations: relative residual of the "
                f"preconditioned system {history[-1]:.3g}; raise maxiter (or tol).",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.dual_coef_ = apply_B(beta)
        self.history_ = np.asarray(history)
        self.n_iter_ = len(history) - 1
        self.n_centers_ = M
        self._finish_progress(progress)
        return self

    def _finish_progress(self, progress):
        if self.verbose is None:  # verbose=True has printed every iteration already
            progress.finish(
                f"done: {self.n_iter_} CG iterations, relative residual "
                f"{float(self.history_[-1]):.3e} (tol {self.tol:g})"
            )

    def _decision(self, X):
        check_is_fitted(self, "dual_coef_")
        xp = namespace_of(X, fitted=self.dual_coef_)
        if xp is not None:
            X = validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])
            return devices.nystroem_krr_decision(self, X, xp)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        X = X.astype(self.dtype, copy=False)
        out = np.empty((len(X), self.dual_coef_.shape[1]))
        for start, Kb in self._kernel_blocks(X):
            out[start : start + len(Kb)] = Kb @ self.dual_coef_ + self.y_mean_
        return out


class NystroemKRR(MultiOutputMixin, RegressorMixin, _BaseNystroemKRR):
    r"""Nyström kernel ridge regression solved by FALKON-preconditioned conjugate gradient.

    Minimises :math:`\frac1n\sum_i (f(x_i) - y_i)^2 + \lambda \|f\|_{\mathcal H}^2` over
    :math:`f = \sum_{j=1}^M \alpha_j K(\cdot, \tilde x_j)` with M centres drawn uniformly from the
    training points, i.e. solves
    :math:`(K_{nM}^T K_{nM} + \lambda n K_{MM})\alpha = K_{nM}^T (y - \bar y)`
    without forming an n × n matrix (module docstring). With ``n_centers = n`` and full
    convergence this is exact kernel ridge regression :math:`\alpha = (\mathbf K + \lambda n I)^{-1}
    (y - \bar y)` of lecture 002.

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        A name from :data:`kernelcourse.kernels.KERNEL_NAMES` or a kernel object.
    gamma : float > 0 or None
        γ of a named kernel; None means 1 / n_features.
    lam : float > 0, default=1e-6
        Regularisation λ (per-sample scaling: the penalty is λ n αᵀK_MMα).
    n_centers : int, default=500
        Number M of Nyström centres (capped at n with a warning).
    maxiter : int, default=20
        Conjugate-gradient iterations t; a few tens in FALKON's regime (M of order 1/λ up
        to logs), more outside it.
    tol : float >= 0, default=1e-7
        Stop earlier once the relative residual of the preconditioned system is below ``tol``.
    preconditioner : {"falkon"} or None, default="falkon"
        None runs plain CG on the normal equations (for comparison; converges far slower).
    block_memory : float > 0 or None, default=None
        Memory in MB for one row block of :math:`K_{nM}`. None means 256 MB on the host and,
        for arrays on an accelerator, half of the device memory that is free once the
        preconditioner is allocated. A value that does not fit in the device's free memory
        fails with a ValueError before the fit starts.
    precompute : bool, default=False
        Accumulate the M × M matrix :math:`K_{nM}^T K_{nM}` in a single pass over the data
        (O(n M²) flops, M² memory) so that the CG iterations touch no data. Pays off when
        M is smaller than about ``maxiter`` × (n_features + a few), since a kernel entry costs
        O(d) flops plus an exponential while a rank-one update costs M.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the kernel blocks; float32 halves memory and time, CG stays in float64.
    random_state : int, RandomState or None
        Seeds the choice of centres.
    callback : callable or None
        Called as ``callback(iteration, alpha, relative_residual)`` after each CG step.
    verbose : None, bool or int >= 0, default=None
        True (or >= 1) prints iteration, residual and elapsed time after every CG step (a
        :class:`ProgressPrinter`, on standard output). None, the default, is silent unless
        the fit runs longer than 30 s; then it writes a line every 30 s to standard error
        (CG iteration or rows of the current pass over the data, residual, elapsed time), so
        that a long fit never looks like a hang. 0 or False: never a line
        (:mod:`kernelcourse._progress`).

    Attributes
    ----------
    centers_ : ndarray of shape (M, n_features)
    center_indices_ : ndarray of shape (M,)
    dual_coef_ : ndarray of shape (M, n_targets)
        α.
    y_mean_ : ndarray of shape (n_targets,)
    history_ : ndarray of shape (n_iter_ + 1,)
        Relative residual of the (preconditioned) CG system at each iteration, starting at 1.
    residual_ : float
        The relative residual of the preconditioned system at the solution, measured with one
        more product after CG stops (the recursion in ``history_`` can drift from it). Above
        ``tol`` the fit warns (:class:`~sklearn.exceptions.ConvergenceWarning`).
    n_iter_ : int
    kernel_ : Kernel
    n_features_in_ : int

    Notes
    -----
    With ``sklearn.set_config(array_api_dispatch=True)``, PyTorch (CPU or CUDA), CuPy or
    array-api-strict inputs are fitted on their own device (:mod:`kernelcourse.devices`):
    kernel blocks in the input's dtype (``dtype`` still chooses float32 or float64), the
    preconditioner, CG and α in float64 where the device supports it — FALKON's recipe.
    ``centers_``, ``dual_coef_`` and ``y_mean_`` then live on that device and predictions
    come back there.

    References
    ----------
    A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
    G. Meanti, L. Carratino, L. Rosasco, A. Rudi. Kernel methods through the roof: handling
    billions of points efficiently. NeurIPS 2020.
    """

    def fit(self, X, y, sample_weight=None):
        """Choose the centres and solve the normal equations by preconditioned CG.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s_i`: the risk becomes
            :math:`\\frac{1}{\\sum s}\\sum_i s_i (f(x_i) - y_i)^2`, i.e. the system
            :math:`(K_{nM}^T S K_{nM} + \\lambda (\\textstyle\\sum s) K_{MM})\\alpha =
            K_{nM}^T S (y - \\bar y_s)` with the weighted mean :math:`\\bar y_s`; an integer
            weight counts as that many copies of the point. Points of weight 0 are left out
            (and never become centres).
        """
        self._validate_params()
        xp = namespace_of(X)
        if xp is not None:
            X, y = validate_data(
                self, X, y, multi_output=True, y_numeric=True, dtype=[xp.float64, xp.float32]
            )
            device = _array_api.device_of(X)
            Y = xp.astype(_array_api.move(y, xp, device), _array_api.max_float(xp, device))
            self._single_output = Y.ndim == 1
            sw = _host_weights(sample_weight, X.shape[0])
            self._fit_targets(X, Y[:, None] if self._single_output else Y, sw, xp=xp)
            return self
        check_fit_input(X, y, regression=True)
        X, y = validate_data(
            self, X, y, multi_output=True, y_numeric=True, dtype=[np.float64, np.float32]
        )
        Y = np.asarray(y, dtype=np.float64)
        self._single_output = Y.ndim == 1
        sw = check_weights(sample_weight, X)
        self._fit_targets(X, Y[:, None] if self._single_output else Y, sw)
        return self

    def predict(self, X):
        """f(x) = Σⱼ αⱼ K(x, x̃ⱼ) + ȳ, computed in row blocks."""
        out = self._decision(X)
        return out[:, 0] if self._single_output else out


class NystroemKRRClassifier(ClassifierMixin, _BaseNystroemKRR):
    r"""One-vs-rest classification with :class:`NystroemKRR`: regress ±1 codes, predict argmax.

    Parameters are those of :class:`NystroemKRR`. All classes share one pass over the data per
    CG iteration (the targets are the columns of one right-hand side).

    Attributes
    ----------
    classes_ : ndarray
    dual_coef_ : ndarray of shape (M, n_classes) (one column for two classes)
    history_, n_iter_, centers_, kernel_ : as in :class:`NystroemKRR`.
    """

    def fit(self, X, y, sample_weight=None):
        """Fit one ±1 regression per class (one for two classes), sharing the CG passes.

        ``sample_weight`` as in :meth:`NystroemKRR.fit`.
        """
        self._validate_params()
        xp = namespace_of(X)
        if xp is not None:  # labels are binarized on the host, the ±1 codes sent to X's device
            X = validate_data(self, X, dtype=[xp.float64, xp.float32])
            y = _array_api.to_numpy(y) if namespace_of(y) is not None else np.asarray(y)
            sw = _host_weights(sample_weight, X.shape[0])
        else:
            check_fit_input(X, y)
            X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
            sw = check_weights(sample_weight, X)
        check_classification_targets(y)
        self._binarizer = LabelBinarizer(pos_label=1, neg_label=-1)
        Y = self._binarizer.fit_transform(y).astype(np.float64)
        self.classes_ = self._binarizer.classes_
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has only one class ({self.classes_[0]!r}); classification needs at least two."
            )
        if xp is not None:
            if len(Y) != X.shape[0]:
                raise ValueError(f"y has {len(Y)} labels but X has {X.shape[0]} rows.")
            device = _array_api.device_of(X)
            Y = _array_api.from_numpy(Y, xp, device, _array_api.max_float(xp, device))
            if self.classes_.dtype.kind in "iufb":  # numeric labels follow X, as in sklearn
                self.classes_ = _array_api.from_numpy(self.classes_, xp, device)
        self._fit_targets(X, Y, sw, xp=xp)
        return self

    def decision_function(self, X):
        """Scores f_c(x), shape (n,) for two classes, else (n, n_classes)."""
        out = self._decision(X)
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X):
        """The class with the largest score (the sign of f for two classes); for array-API
        input, numeric labels come back as an array of X's library on X's device, any other
        labels as a numpy array."""
        scores = self.decision_function(X)
        xp = namespace_of(scores)
        if xp is not None:
            idx = xp.astype(scores > 0, xp.int64) if scores.ndim == 1 else xp.argmax(scores, axis=1)
            if isinstance(self.classes_, np.ndarray):  # labels that no array library holds
                return self.classes_[_array_api.to_numpy(idx)]
            return xp.take(self.classes_, idx, axis=0)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


# -- out-of-core ridge on random features (strategy ⑤) --------------------------------------------
# Maps whose fit looks only at the shape of X: fitting them on the first block is harmless.
_DATA_INDEPENDENT_MAPS = (RandomFourierFeatures, RBFSampler, SkewedChi2Sampler)


def _is_fitted(est):
    try:
        check_is_fitted(est)
    except NotFittedError:
        return False
    return True


class StreamingFeatureRidge(MultiOutputMixin, RegressorMixin, BaseEstimator):
    r"""Ridge regression on an approximate feature map, trained block by block (strategy ⑤).

    Each call ``partial_fit(X_block, y_block)`` computes :math:`Z = \psi(X_{\text{block}})` on the
    fly and adds :math:`Z^T Z` and :math:`Z^T y` to running sums; nothing of size n is kept. The
    weights solve

    .. math:: (Z_c^T Z_c + \lambda n I)\, w = Z_c^T (y - \bar y),

    with :math:`Z_c` the centred features (so an intercept is fitted), which is exactly what
    :meth:`fit` on all the rows at once would give, whatever the blocks. The solve is lazy: it
    happens once, when the weights are first needed after new blocks (``coef_``,
    ``intercept_``, :meth:`predict` or :meth:`solve`), so that a λ too small for the first few
    blocks does no harm when the full system is well posed. Should the full system still be
    numerically singular, the solve warns with its smallest eigenvalue and falls back to least
    squares (:func:`~kernelcourse.ridge.solve_regularized_psd`).

    Sparse features (scipy.sparse output of ψ, e.g.
    :class:`~kernelcourse.features.RandomBinningFeatures`) keep :math:`Z^T Z` sparse, so
    memory is O(nnz(ZᵀZ)) instead of D², and the weights are found by conjugate gradients
    with the block-Jacobi preconditioner of :func:`~kernelcourse.ridge.sparse_ridge_cg`
    (exact and diagonal for one-hot blocks), the centring applied as a rank-one term.

    Parameters
    ----------
    features : transformer or None
        The feature map ψ. A fitted transformer is used as it is; an unfitted one is cloned and
        fitted on the first block; None means ``RandomFourierFeatures(n_components=100)`` (RBF
        kernel, γ = 1 / n_features). A data-dependent map (Nyström, random binning, anything
        but random Fourier features) fitted on a first block of fewer than
        10 D rows warns: it saw too few points to place its D features. Fit it on a sample of
        the whole data first instead.
    lam : float > 0, default=1e-6
        Ridge λ with per-sample scaling (penalty λ n ‖w‖²).
    block_size : int, default=10000
        Rows per block when :meth:`fit` streams an in-memory array.
    tol : float > 0, default=1e-6
        Sparse features only: relative residual at which conjugate gradients stop.
    maxiter : int >= 1, default=500
        Sparse features only: most conjugate-gradient iterations (a ``ConvergenceWarning``
        names the residual reached when tol was not).
    random_state : int, RandomState or None
        Seed for the default feature map.

    Attributes
    ----------
    features_ : transformer
        The feature map in use.
    coef_ : ndarray of shape (n_targets, D) or (D,)
        Solved on first access after new blocks.
    intercept_ : ndarray of shape (n_targets,) or float
    n_samples_seen_ : int
    n_features_in_ : int
    """

    _parameter_constraints = {
        "features": [None, HasMethods(["fit", "transform"])],
        "lam": [Interval(numbers.Real, 0, None, closed="neither")],
        "block_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "maxiter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, features=None, *, lam=1e-6, block_size=10000, tol=1e-6, maxiter=500, random_state=None
    ):
        self.features = features
        self.lam = lam
        self.block_size = block_size
        self.tol = tol
        self.maxiter = maxiter
        self.random_state = random_state

    def _reset(self):
        for name in ("features_", "_ZtZ", "_Zty", "_zsum", "_ysum", "n_samples_seen_", "_solution"):
            if name in vars(self):
                delattr(self, name)

    def fit(self, X, y):
        """Stream ``X`` in blocks of ``block_size`` rows through :meth:`partial_fit`, then
        solve."""
        self._reset()
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True)
        for start in range(0, len(X), self.block_size):
            self.partial_fit(X[start : start + self.block_size], y[start : start + self.block_size])
        return self.solve()

    def _first_features(self, X):
        if self.features is None:
            return RandomFourierFeatures(n_components=100, random_state=self.random_state).fit(X)
        if _is_fitted(self.features):
            return copy.deepcopy(self.features)
        features = clone(self.features).fit(X)
        if not isinstance(features, _DATA_INDEPENDENT_MAPS):
            D = features.transform(X[:1]).shape[1]
            if len(X) < 10 * D:
                warnings.warn(
                    f"{type(features).__name__} was fitted on the first block only, "
                    f"{len(X)} rows for D = {D} features (fewer than 10 D): a data-dependent "
                    "map needs a representative sample. Fit it on a sample of all the data "
                    "and pass the fitted map, or make the first block larger.",
                    UserWarning,
                    stacklevel=3,
                )
        return features

    def partial_fit(self, X, y):
        """Add one block of rows to the sufficient statistics ZᵀZ, Zᵀy (no solve)."""
        first = not hasattr(self, "_ZtZ")
        if first:
            self._validate_params()
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, reset=first)
        Y = np.asarray(y, dtype=np.float64)
        if first:
            self._single_output = Y.ndim == 1
            self.features_ = self._first_features(X)
        Y = Y[:, None] if Y.ndim == 1 else Y
        if not first and Y.shape[1] != self._Zty.shape[1]:
            raise ValueError(
                f"y has {Y.shape[1]} targets but earlier blocks had {self._Zty.shape[1]}."
            )
        Z = self.features_.transform(X)
        Z = sp.csr_matrix(Z, dtype=np.float64) if sp.issparse(Z) else np.asarray(Z, np.float64)
        if first:
            D = Z.shape[1]
            self._ZtZ = sp.csr_matrix((D, D)) if sp.issparse(Z) else np.zeros((D, D))
            self._Zty = np.zeros((D, Y.shape[1]))
            self._zsum = np.zeros(D)
            self._ysum = np.zeros(Y.shape[1])
            self.n_samples_seen_ = 0
        self._ZtZ += Z.T @ Z
        self._Zty += Z.T @ Y
        self._zsum += np.asarray(Z.sum(axis=0)).ravel()
        self._ysum += Y.sum(axis=0)
        self.n_samples_seen_ += Z.shape[0]
        self._solution = None  # stale: solved again on demand
        return self

    def solve(self):
        """Solve for w and b from the statistics gathered so far (done once per new data)."""
        if not hasattr(self, "_ZtZ"):
            raise NotFittedError(
                "This StreamingFeatureRidge has seen no data; call fit or partial_fit first."
            )
        if self._solution is None:
            self._solution = self._solve()
        return self

    def _solve(self):
        n = self.n_samples_seen_
        zbar, ybar = self._zsum / n, self._ysum / n
        c = self._Zty - n * np.outer(zbar, ybar)
        lam_n = float(self.lam) * n
        if sp.issparse(self._ZtZ):
            G = self._ZtZ

            def matvec(V):  # (ZᵀZ − n z̄z̄ᵀ + λn I) V, the centring as a rank-one term
                return G @ V - n * np.outer(zbar, zbar @ V) + lam_n * V

            diag = G.diagonal() - n * zbar**2 + lam_n
            W, history = preconditioned_cg(matvec, c, diag, tol=self.tol, maxiter=self.maxiter)
            self.history_ = history
            if history[-1] > self.tol:
                warnings.warn(
                    f"block-Jacobi CG stopped after {len(history) - 1} iterations with "
                    f"relative residual {history[-1]:.2e} > tol = {self.tol:g}; raise maxiter "
                    "or lam.",
                    ConvergenceWarning,
                    stacklevel=4,
                )
        else:
            G = self._ZtZ - n * np.outer(zbar, zbar)
            W = solve_regularized_psd(G, c, lam_n, overwrite_a=True, name="Z_cᵀZ_c")
        b = ybar - zbar @ W
        if self._single_output:
            return W[:, 0], float(b[0])
        return W.T, b

    @property
    def coef_(self):
        if "_ZtZ" not in vars(self):
            raise AttributeError("coef_ exists once data has been seen (fit or partial_fit).")
        return self.solve()._solution[0]

    @property
    def intercept_(self):
        if "_ZtZ" not in vars(self):
            raise AttributeError("intercept_ exists once data has been seen (fit or partial_fit).")
        return self.solve()._solution[1]

    def predict(self, X):
        """w·ψ(x) + b."""
        check_is_fitted(self, "n_samples_seen_")
        X = validate_data(self, X, reset=False)
        coef, intercept = self.coef_, self.intercept_
        Z = self.features_.transform(X)
        Z = sp.csr_matrix(Z, dtype=np.float64) if sp.issparse(Z) else np.asarray(Z, np.float64)
        return Z @ coef.T + intercept


# -- the data set of the large-scale benchmark -----------------------------------------------------
