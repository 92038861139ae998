r"""Kernel ridge regression when the n × n Gram matrix does not fit: Nyström + FALKON, streaming.

Exact kernel ridge regression does not scale (:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`,
:doc:`chapter 11 </book/11_scaling_up>`): at :math:`n = 10^6` the kernel matrix alone takes
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

* :class:`StreamingFeatureRidge` is strategy ⑤ of :doc:`chapter 3 </book/03_kernel_trick_six_ways>`
  (approximate features on the fly, Rahimi & Recht 2007) applied to ridge regression: a fixed
  approximate feature map ψ (random Fourier features, Nyström, ...) is applied to one block of
  rows at a time, and only :math:`Z^T Z` (D × D) and :math:`Z^T y` are kept, so ``partial_fit``
  can stream a data set larger than memory.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
    clone,
)
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import RBFSampler, SkewedChi2Sampler
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _array_api, devices, solvers
from ._array_api import namespace_of
from ._progress import Progress
from ._validation import (
    ClassifierScoreMixin,
    LostPhase,
    RegressorScoreMixin,
    cast_for_kernel,
    cast_to,
    check_class_totals,
    check_count,
    check_fit_input,
    check_labels,
    check_positive,
    check_weights,
    count_constraint,
    find_stack_level,
    finite_gram,
    gamma_constraint,
    one_vs_rest_targets,
    real_constraint,
    refuse_complex_features,
    transform_unwarned,
    validate_data,
)
from .features import RandomFourierFeatures
from .kernels import KERNEL_NAMES, RBF, Kernel, resolve_kernel
from .ridge import _copy_fitted_map, _refuse_no_features, solve_regularized_psd
from .solvers import conjugate_gradient

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
    as ``callback(iteration, alpha, residual)`` after every conjugate-gradient step, and reads
    no coefficients: ``needs_coefficients = False`` lets the solver pass ``alpha=None``
    rather than form them.

    Parameters
    ----------
    file : file-like or None, default=None
        Where the lines go; None means standard output.
    every : int >= 1, default=1
        Print after every ``every``-th iteration only.

    See Also
    --------
    NystroemKRR
        Whose ``verbose=True`` uses it.

    Examples
    --------
    >>> from kernelcourse.scale import ProgressPrinter
    >>> ProgressPrinter()(3, None, 1.5e-4)
    iteration   3  relative residual 1.500e-04  elapsed 0.0 s
    """

    needs_coefficients = False

    def __init__(self, file=None, every=1):
        self.file = file
        # every=0 failed at the first iteration with "integer modulo by zero", and 2.5 or -1
        # printed at other iterations than asked
        self.every = check_count(every, "every")
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

        printer.needs_coefficients = False  # the solver need not form α for it
    else:
        return callback
    if callback is None:
        return printer

    def both(it, alpha, residual):
        callback(it, alpha, residual)
        printer(it, alpha, residual)

    # the printers read no α: the pair needs it only if the user's callback does
    both.needs_coefficients = getattr(callback, "needs_coefficients", True)
    return both


def exact_krr_cost(n, *, itemsize=8, flops_per_second=1e10):
    r"""Memory (bytes) and time (seconds) of exact kernel ridge regression on n points.

    Storing :math:`\mathbf K` takes :math:`\text{itemsize}\cdot n^2` bytes (8 TB at n = 10⁶ in
    float64; :doc:`chapter 11 </book/11_scaling_up>`) and a Cholesky solve takes :math:`n^3/3`
    floating-point operations. n may be an array of sizes; a cost beyond the float range is
    ``inf``.

    Examples
    --------
    >>> from kernelcourse.scale import exact_krr_cost
    >>> memory, seconds = exact_krr_cost(10**6)
    >>> print(f"{memory / 1e12:.0f} TB, {seconds / 3600:.0f} hours at 10 GFLOP/s")
    8 TB, 9259 hours at 10 GFLOP/s
    """
    arr = np.asarray(n)
    if arr.dtype == object and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in arr.flat
    ):
        # integers beyond int64 (10**200) are numbers of points too, not "not a number"
        try:
            arr = np.asarray([float(v) for v in arr.flat]).reshape(arr.shape)
        except OverflowError:
            raise ValueError(
                "n must be finite and >= 0, got an integer beyond the float range."
            ) from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"n must be a number of points (or an array of them), got {n!r}.")
    n = arr.astype(np.float64)
    if not (np.isfinite(n).all() and (n >= 0).all()):
        raise ValueError(f"n must be finite and >= 0, got {arr!r}.")
    itemsize = check_positive(itemsize, "itemsize")
    flops_per_second = check_positive(flops_per_second, "flops_per_second")
    with np.errstate(over="ignore"):  # the correctly rounded cost, not numerical trouble
        return itemsize * n**2, n**3 / 3 / flops_per_second


# -- Nyström kernel ridge regression solved by FALKON ----------------------------------------------
def _host_weights(sample_weight, n):
    """:func:`check_weights` for X on another device. The weights stay on the host, where
    they choose the support and the centres; the fit sends them to X's device."""
    if sample_weight is None:
        return None
    if namespace_of(sample_weight) is not None:
        sample_weight = _array_api.to_numpy(sample_weight)
    return check_weights(sample_weight, np.empty((n, 0)))


# block_size=None on the host: 256 MB blocks of K_nM (on an accelerator: half its free memory)
_HOST_BLOCK_MB = 256


class _BaseNystroemKRR(BaseEstimator):
    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"poly", "gaussian"}), Kernel],
        "gamma": gamma_constraint(per_feature=True),
        "lam": [real_constraint(0, None, closed="neither")],
        "n_components": [count_constraint()],
        "max_iter": [count_constraint()],
        "tol": [real_constraint(0, None, closed="left")],
        "preconditioner": [StrOptions({"falkon"}), None],
        "precompute": ["boolean"],
        "block_size": [count_constraint(), None],
        "dtype": [type, np.dtype],
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
        n_components=500,
        max_iter=20,
        tol=1e-7,
        preconditioner="falkon",
        precompute=False,
        block_size=None,
        dtype=np.float64,
        random_state=None,
        callback=None,
        verbose=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.lam = lam
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.preconditioner = preconditioner
        self.precompute = precompute
        self.block_size = block_size
        self.dtype = dtype
        self.random_state = random_state
        self.callback = callback
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.array_api_support = True
        return tags

    def _validate_params(self):
        super()._validate_params()
        if np.dtype(self.dtype) not in (np.float32, np.float64):
            raise ValueError(
                f"dtype must be numpy.float32 or numpy.float64, got {np.dtype(self.dtype)}."
            )

    # -- blocks of K_nM --------------------------------------------------------------------------
    def _block_rows(self, M):
        if self.block_size is not None:
            return int(self.block_size)
        itemsize = np.dtype(self.dtype).itemsize
        # a block of K_nM plus its distance temporaries: about two M-wide arrays per row
        return max(1, int(_HOST_BLOCK_MB * 2**20 // (2 * M * itemsize)))

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
        """R with RᵀR = K_nMᵀ S K_nM (a tall-skinny QR over the row blocks, see
        :func:`~kernelcourse.solvers.gram_factor_update`) and K_nMᵀY, in one pass over the
        data. In float64 even for float32 blocks: the factor is what CG's matrix is built
        from, and the float32 Gram matrix lost definiteness."""
        R = None
        KtY = np.zeros((M, Y.shape[1]))
        for start, Kb in self._kernel_blocks(X, progress):
            Kw = np.asarray(Kb, dtype=np.float64)
            KtY += Kw.T @ Y[start : start + len(Kb)]  # float64, as in _knm_t_y
            if sw is not None:
                Kw = Kw * np.sqrt(sw[start : start + len(Kb), None])
            R = solvers.gram_factor_update(R, Kw)
        return R, KtY

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
                f"n_components={M} but X has only {len(keep)} distinct rows; using those "
                f"{len(keep)} as centres (repeated centres add nothing to the span of "
                "K(·, x̃) and make K_MM singular).",
                UserWarning,
                stacklevel=find_stack_level(),
            )
        return np.sort(keep)

    def _fit_targets(self, X, Y, sw=None, xp=None):
        n, d = X.shape
        # before the weights' support is taken: gamma="scale" reads all of X, as SVC does
        self.kernel_ = resolve_kernel(self.kernel, gamma=self.gamma, n_features=d, X=X)
        rng = check_random_state(self.random_state)
        M = check_count(self.n_components, "n_components")  # True reached rng.choice
        support = None
        if sw is not None:
            # Points of weight zero do not count: centres come from the others, and the
            # normal equations are those of the weighted risk (1/Σs) Σ s_i (f(x_i) − y_i)².
            support = np.flatnonzero(sw > 0)
            if xp is None:
                X, Y = X[support], Y[support]
            else:
                take = _array_api.from_numpy(support, xp, _array_api.device_of(X))
                X, Y = xp.take(X, take, axis=0), xp.take(Y, take, axis=0)
            # the solution depends on the weights' ratios only: in units of the largest,
            # weights of 1e-320 keep their digits (they had CG drift by a percent)
            sw = sw[support] / sw.max()
            n = len(support)
        if M > n:
            warnings.warn(
                f"n_components={M} > n_samples={n}; using all {n} points as centres.",
                UserWarning,
                stacklevel=find_stack_level(),
            )
            M = n
        progress = Progress(f"{type(self).__name__}.fit", self.verbose)
        callback = _progress_callback(self.callback, self.verbose, progress, self.tol)
        if xp is not None:  # array-API input: blocks, preconditioner and CG on X's device
            device = _array_api.device_of(X)
            X_in, centred = X, False
            if np.dtype(self.dtype) == np.float32 and self.kernel_.shift_invariant:
                # centred in float64 first, as on numpy; the blocks cast the rest
                X, centred = cast_for_kernel(X, xp.float32, True, xp=xp)

            def host_rows(i):  # the candidate centres, as the numpy path sees them
                rows = xp.take(X, _array_api.from_numpy(i, xp, device), axis=0)
                return cast_to(_array_api.to_numpy(rows), self.dtype)

            idx = self._choose_centers(X, M, rng, host_rows)
            fit = devices.nystroem_krr_fit(
                self.kernel_,
                X,
                Y,
                xp,
                idx,
                lam=float(self.lam),
                dtype=self.dtype,
                sample_weight=sw,
                block_size=self.block_size,
                precompute=self.precompute,
                preconditioner=self.preconditioner,
                max_iter=int(self.max_iter),
                tol=float(self.tol),
                callback=callback,
                progress=progress,
            )
            center_indices = idx if support is None else support[idx]
            fit["center_indices"] = _array_api.from_numpy(center_indices, xp, device)
            if centred:  # uncentred, in float64 for predict
                fit["centers"] = xp.take(X_in, _array_api.from_numpy(idx, xp, device), axis=0)
        else:
            X_in = X
            X, centred = cast_for_kernel(X, self.dtype, self.kernel_.shift_invariant)
            idx = self._choose_centers(X, M, rng)
            fit = self._falkon_numpy(X, Y, idx, sw, callback, progress)
            fit["center_indices"] = idx if support is None else support[idx]
            if centred:
                fit["centers"] = X_in[idx]  # uncentred, in float64 for predict
        self.center_indices_ = fit["center_indices"]
        self.centers_ = fit["centers"]
        self.y_mean_ = fit["y_mean"]
        self.dual_coef_ = fit["alpha"]
        result = fit["result"]
        self.history_ = np.asarray(result.cg.history)
        if xp is not None:  # every array attribute lives where X does
            self.history_ = _array_api.from_numpy(
                self.history_, xp, device, _array_api.max_float(xp, device)
            )
        self.n_iter_ = result.cg.n_iter
        self.residual_ = result.residual
        self.n_components_ = len(idx)
        # the products run in the blocks' dtype: the measured residual is good to about √ε
        floor = 10 * math.sqrt(float(np.finfo(np.dtype(self.dtype)).eps))
        solvers.warn_unconverged(
            type(self).__name__,
            result.cg,
            self.tol,
            measured=result.residual,
            floor=floor,
            quantity="relative residual of the preconditioned system",
        )
        host = (lambda A: A) if xp is None else _array_api.to_numpy
        _warn_round_off_sensitivity(
            type(self).__name__,
            self.kernel_,
            host(self.centers_),
            host(self.dual_coef_),
            host(Y),
            np.dtype(self.dtype),
        )
        self._finish_progress(progress)
        return self

    def _fused_products(self, X, centers, sw):
        """For the Gaussian kernel in float32: the product K_nMᵀ S K_nM V and the right-hand
        side K_nMᵀ Y, each in one pass with the kernel tiles made and used in cache
        (:mod:`kernelcourse._fused`); None otherwise."""
        if not (isinstance(self.kernel_, RBF) and X.dtype == np.float32):
            return None
        from ._fused import rbf_normal_products, rbf_transpose_product

        gamma = self.kernel_.gamma
        if np.ndim(gamma) != 0:  # one γ_k per feature: γ = 1 on the inputs scaled by √γ_k
            root = np.sqrt(gamma).astype(np.float32)
            X, centers, gamma = X * root, centers * root, 1.0
        # distances do not change under a common shift: centre on the centres' mean once, so
        # that ‖x‖² + ‖c‖² − 2xᵀc does not cancel in float32 for data far from the origin
        mu = centers.mean(axis=0, dtype=np.float64)
        X = (X - mu).astype(np.float32)
        centers = (centers - mu).astype(np.float32)
        # the tiles clip exponents in float32 arithmetic that assumes finite distances: data
        # whose γ‖x‖² nears float32's range take the row blocks, which report the overflow
        top = max(
            float(np.max(np.einsum("ij,ij->i", A, A, dtype=np.float64))) for A in (X, centers)
        )
        if not gamma * top < 1e36:
            return None
        rows = self.block_size or 128

        def products(V):
            return rbf_normal_products(X, centers, gamma, V, sw, tile=rows)

        def transpose(Y):
            return rbf_transpose_product(X, centers, gamma, Y, tile=rows)

        return products, transpose

    def _falkon_numpy(self, X, Y, idx, sw, callback, progress):
        """FALKON on numpy X (already in ``dtype``): centres, right-hand side, the products
        over row blocks of K_nM, and the solve; returns the arrays the estimator keeps."""
        M = len(idx)
        centers = X[idx]
        self.centers_ = centers  # the row blocks below read it
        # ȳ and α are linear in Y: both are solved for in units of a power of two near each
        # column's largest |y| (exact, so nothing else changes), which keeps targets near the
        # float range (1e306) from overflowing in ȳ, Y − ȳ and K_nMᵀ(Y − ȳ). Never a unit
        # below 1: α of tiny targets need not be tiny (a kernel of order 1e-300).
        unit = np.ldexp(1.0, np.maximum(np.frexp(np.abs(Y).max(axis=0))[1] - 1, 0))
        Y = Y / unit
        y_mean = np.average(Y, axis=0, weights=sw)
        Yc = Y - y_mean
        if callback is not None and getattr(callback, "needs_coefficients", True):
            user_callback = callback

            def callback(it, alpha, residual):  # α in the units of y (inf beyond its range)
                with np.errstate(over="ignore"):
                    alpha = alpha * unit
                user_callback(it, alpha, residual)

        if sw is not None:
            Yc = Yc * sw[:, None]
        n_eff = len(X) if sw is None else float(sw.sum())
        lam = float(self.lam)
        eps = float(np.finfo(np.dtype(self.dtype)).eps)
        # K_MM in float64 whatever the blocks' dtype (M² entries against the blocks' nM), so
        # that the regulariser λnK_MM is K_MM itself: a float32 K_MM, or the jitter of
        # M·ε·max K_ii its Cholesky factor needs (ε of the blocks' dtype, as in FALKON),
        # moved small-λ solutions by percents. The jitter stays in the preconditioner only.
        c64 = centers.astype(np.float64, copy=False)
        KMM = np.asarray(finite_gram(self.kernel_, c64, name="the centres"), np.float64)
        precond = solvers.FalkonPreconditioner(KMM, lam, n_eff, kind=self.preconditioner, eps=eps)
        factor = None
        fused = self._fused_products(X, centers, sw)
        if self.precompute:
            # one pass: the factor of K_nMᵀ K_nM (M × M, O(n M²) flops), then CG touches no
            # data
            factor, KtY = self._gram_pass(X, Yc, M, sw, progress)
        elif fused is not None:
            KtY = fused[1](Yc)  # the right-hand side from the kernel entries CG will use
        else:
            KtY = self._knm_t_y(X, Yc, progress)
        if not np.isfinite(KtY).all():
            raise ValueError(
                f"the kernel {self.kernel_!r} gives NaN or infinity between X and the centres "
                "(X too large in magnitude for this kernel?); rescale X."
            )
        if fused is not None:
            products = fused[0]
        else:

            def products(V):
                return self._knm_t_knm(X, V, sw, progress)

        result = solvers.falkon_solve(
            precond,
            products,
            KtY,
            lam,
            n_eff,
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            callback=callback,
            gram_factor=factor,
            eps=eps,
        )
        with np.errstate(over="ignore"):
            alpha = result.alpha * unit
        if not np.isfinite(alpha).all():
            raise ValueError(
                f"the coefficients α overflow for targets of order {float(unit.max()):.0e} "
                f"(largest |α| {float(np.abs(result.alpha).max()):.3g} times that): rescale "
                "y (or raise lam)."
            )
        return {"centers": centers, "y_mean": y_mean * unit, "alpha": alpha, "result": result}

    def _finish_progress(self, progress):
        if self.verbose is None:  # verbose=True has printed every iteration already
            progress.finish(
                f"done: {self.n_iter_} CG iterations, relative residual "
                f"{float(self.history_[-1]):.3e} (tol {self.tol:g})"
            )

    def _decision(self, X, method):
        """f(X), shape (n, n_targets); ``method`` is the public method called, for errors."""
        check_is_fitted(self, "dual_coef_")
        xp = namespace_of(X, fitted=self.dual_coef_, called=(self, method))
        if xp is not None:
            X = validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])
            return devices.nystroem_krr_decision(self, X, xp)
        # Predictions in float64 whatever ``dtype``: float32 products depend on how many rows
        # share a block, and a point's score should not depend on the points next to it.
        X = validate_data(self, X, reset=False, dtype=np.float64)
        centers = self.centers_.astype(np.float64, copy=False)
        rows = self._block_rows(len(centers))
        out = np.empty((len(X), self.dual_coef_.shape[1]))
        for start in range(0, len(X), rows):
            Kb = self.kernel_(X[start : start + rows], centers)
            out[start : start + len(Kb)] = Kb @ self.dual_coef_ + self.y_mean_
        return out


def _warn_round_off_sensitivity(name, kernel, centers, alpha, Y, dtype, limit=0.05):
    r"""Warn when the rounding of the kernel blocks (of ``dtype``) may have moved the
    predictions by more than ``limit`` times the spread of the targets.

    CG solves the system of the rounded kernel; a prediction :math:`k_x^T\alpha` with the
    exact kernel differs from the rounded one by up to about
    :math:`\varepsilon\sqrt M\,\kappa^2\lVert\alpha\rVert` (κ² the largest K(c, c), which
    bounds every entry, ε that of the blocks' dtype). That is harmless while λ keeps α
    small, and not where a small λ and nearly dependent centres make α large: in float32
    at λ = 1e-7 with centres a few hundredths apart, and in float64 where λ is below the
    kernel's round-off (a linear kernel on data of order 1e6 with λ = 1e-6), whose
    predictions came from round-off alone."""
    Y = np.asarray(Y, dtype=np.float64).reshape(len(Y), -1)
    A = np.asarray(alpha, dtype=np.float64).reshape(len(alpha), -1)
    # α is linear in y: both in units of y's largest entry, whose square overflows from 1e154
    unit = float(np.abs(Y).max(initial=0.0)) or 1.0
    Y, A = Y / unit, A / unit
    kappa2 = float(np.max(kernel.diag(np.asarray(centers, dtype=np.float64)), initial=0.0))
    with np.errstate(over="ignore", invalid="ignore"):
        est = float(np.finfo(dtype).eps) * math.sqrt(len(A)) * max(kappa2, 0.0)
        est = est * np.linalg.norm(A, axis=0)
    spread = Y.std(axis=0)
    ratio = np.where(spread > 0, est / np.where(spread > 0, spread, 1.0), 0.0)
    if not float(ratio.max()) <= limit:
        bits = np.finfo(dtype).bits
        cure = "Use dtype=numpy.float64 or a larger lam." if bits < 64 else "Raise lam."
        warnings.warn(
            f"{name}: the solution is sensitive to the rounding of the float{bits} kernel "
            f"blocks: predictions may move by up to about {float(est.max()) * unit:.2g} "
            f"(ε·√M·κ²·‖α‖ with ε = {float(np.finfo(dtype).eps):.1e}), "
            f"{float(ratio.max()):.0%} of the spread of the targets. {cure}",
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )


class NystroemKRR(RegressorScoreMixin, MultiOutputMixin, RegressorMixin, _BaseNystroemKRR):
    r"""Nyström kernel ridge regression solved by FALKON-preconditioned conjugate gradient.

    Minimises :math:`\frac1n\sum_i (f(x_i) - y_i)^2 + \lambda \|f\|_{\mathcal H}^2` over
    :math:`f = \sum_{j=1}^M \alpha_j K(\cdot, \tilde x_j)` with M centres drawn uniformly from the
    training points, i.e. solves
    :math:`(K_{nM}^T K_{nM} + \lambda n K_{MM})\alpha = K_{nM}^T (y - \bar y)`
    without forming an n × n matrix (module docstring). With ``n_components = n`` and full
    convergence this is exact kernel ridge regression :math:`\alpha = (\mathbf K + \lambda n I)^{-1}
    (y - \bar y)` (:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`; Williams & Seeger 2001).

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        A name from :data:`kernelcourse.kernels.KERNEL_NAMES` or a kernel object.
    gamma : float > 0, "scale", array-like of shape (n_features,) or None
        γ of a named kernel; None means 1 / n_features and "scale" 1 / (n_features · Var X),
        the variance of all the entries of X (as scikit-learn's ``SVC``; with sample weights,
        of all the rows, as there). For the RBF kernel, an array gives
        one :math:`\gamma_k` per feature (the ARD kernel of :class:`~kernelcourse.kernels.RBF`).
    lam : float > 0, default=1e-6
        Regularisation λ (per-sample scaling: the penalty is λ n αᵀK_MMα).
    n_components : int, default=500
        Number M of Nyström centres (capped at n with a warning).
    max_iter : int, default=20
        Conjugate-gradient iterations t; a few tens in FALKON's regime (M of order 1/λ up
        to logs), more outside it.
    tol : float >= 0, default=1e-7
        Stop earlier once the relative residual of the preconditioned system is below ``tol``.
    preconditioner : {"falkon"} or None, default="falkon"
        None runs plain CG on the normal equations (for comparison; converges far slower).
    block_size : int >= 1 or None, default=None
        Rows per block of :math:`K_{nM}`. None sizes the blocks to 256 MB on the host and,
        for arrays on an accelerator, to half of the device memory that is free once the
        preconditioner is allocated. Blocks that do not fit in the device's free memory
        fail with a ValueError before the fit starts.
    precompute : bool, default=False
        Accumulate the M × M factor R of :math:`K_{nM}^T K_{nM} = R^TR` (a tall-skinny QR
        over the row blocks, :func:`~kernelcourse.solvers.gram_factor_update`) in a single
        pass over the data (O(n M²) flops, M² memory) so that the CG iterations touch no
        data. Pays off when M is smaller than about ``max_iter`` × (n_features + a few),
        since a kernel entry costs O(d) flops plus an exponential while a row of the QR
        update costs O(M). The factor, unlike the matrix itself, keeps the accuracy of the
        unprecomputed solve where :math:`K_{MM}` is nearly singular.
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Precision of the kernel blocks; float32 halves memory and time, CG stays in float64.
        The solve is then that of the kernel rounded to float32. In either dtype, a
        RuntimeWarning says when the blocks' rounding may move the predictions by more than
        5 % of the targets' spread (a small ``lam`` with nearly dependent centres makes the
        coefficients large; in float64 that takes a λ below the kernel's round-off).
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
    history_ : ndarray of shape (``n_iter_`` + 1,)
        Relative residual of the (preconditioned) CG system at each iteration, starting at 1.
    residual_ : float
        The relative residual of the preconditioned system at the solution, measured with one
        more product after CG stops (the recursion in ``history_`` can drift from it). Above
        ``tol`` the fit warns (:class:`~sklearn.exceptions.ConvergenceWarning`).
    n_iter_ : int
    kernel_ : Kernel
    n_features_in_ : int

    See Also
    --------
    NystroemKRRClassifier
        The same solver for classification (one-vs-rest on ±1 codes).
    kernelcourse.distributed.DaskNystroemKRR
        The same model fitted on a ``dask.array``.
    kernelcourse.ridge.KernelRidge
        Exact kernel ridge regression, O(n³).
    kernelcourse.ridge.FeatureRidge
        Ridge on explicit random features (Nyström or Fourier), solved directly.
    StreamingFeatureRidge
        Ridge on random features, block by block.

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
    C. Williams and M. Seeger, "Using the Nyström method to speed up kernel machines", NIPS 2001.
    The algorithm and its regime: :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.scale import NystroemKRR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    >>> krr = NystroemKRR(gamma=1.0, lam=1e-4, n_components=50, random_state=0).fit(X, y)
    >>> print(round(krr.score(X, y), 2))
    0.98
    >>> print(krr.predict(np.array([[0.0], [1.5]])).round(1))
    [0.  1.]
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
        out = self._decision(X, "predict")
        return out[:, 0] if self._single_output else out


class NystroemKRRClassifier(ClassifierScoreMixin, ClassifierMixin, _BaseNystroemKRR):
    r"""One-vs-rest classification with :class:`NystroemKRR`: regress ±1 codes, predict argmax.

    Parameters are those of :class:`NystroemKRR`. All classes share one pass over the data per
    CG iteration (the targets are the columns of one right-hand side).

    Attributes
    ----------
    classes_ : ndarray
    dual_coef_ : ndarray of shape (M, n_classes) (one column for two classes)
    history_, n_iter_, centers_, kernel_ : as in :class:`NystroemKRR`.

    See Also
    --------
    NystroemKRR
        The regressor it runs once per class.
    kernelcourse.svm.KernelSVC
        The kernel SVM, solved exactly in the dual.

    References
    ----------
    A. Rudi, L. Carratino, L. Rosasco. FALKON: An Optimal Large Scale Kernel Method. NeurIPS 2017.
    :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.scale import NystroemKRRClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = (X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4).astype(int)
    >>> clf = NystroemKRRClassifier(gamma=1.0, lam=1e-3, n_components=60, tol=1e-4,
    ...                             random_state=0).fit(X, y)
    >>> print(clf.classes_, round(clf.score(X, y), 2))
    [0 1] 0.99
    """

    def fit(self, X, y, sample_weight=None):
        """Fit one ±1 regression per class (one for two classes), sharing the CG passes.

        ``sample_weight`` as in :meth:`NystroemKRR.fit`.
        """
        self._validate_params()
        xp = namespace_of(X)
        # labels are binarized on the host, the ±1 codes then follow X: y of another library
        # comes to numpy first, whatever X is
        y = _array_api.to_numpy(y) if namespace_of(y) is not None else y
        if xp is not None:
            X = validate_data(self, X, dtype=[xp.float64, xp.float32])
            y = validate_data(self, y=np.asarray(y))  # the numpy path's checks: NaN, shape
            sw = _host_weights(sample_weight, X.shape[0])
        else:
            check_fit_input(X, y)
            X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
            sw = check_weights(sample_weight, X)
        # a column y warns and is raveled on both paths (the device path skips validate_data)
        self.classes_, Y, codes = one_vs_rest_targets(check_labels(y, ravel=True))
        # a class whose samples all weigh 0 got the code −1 everywhere it counts, silently
        check_class_totals(codes, sw, self.classes_)
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
        return self._scores(X, "decision_function")

    def _scores(self, X, method):
        out = self._decision(X, method)
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X):
        """The class with the largest score (the sign of f for two classes); for array-API
        input, numeric labels come back as an array of X's library on X's device, any other
        labels as a numpy array."""
        scores = self._scores(X, "predict")
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


def _unshifted_sums(ZtZ, ZtY, zsum, ysum, n, a, s, fit_intercept):
    r"""The normal equations of ridge on features from sums taken about a shifted origin.

    The sums are those of the shifted rows zᵢ − a and yᵢ − s (the shifted-data method of
    Chan, Golub & LeVeque, 1983, with a and s the first row): ``ZtZ`` = ZₛᵀZₛ, ``ZtY`` =
    ZₛᵀYₛ, ``zsum`` = u = Σ(zᵢ − a), ``ysum`` = v = Σ(yᵢ − s) over ``n`` rows. Centring raw
    sums instead, ZᵀZ − n z̄z̄ᵀ, loses about 2 log₁₀(|mean| / spread) digits.

    Returns ``(ZtZ, c, zbar, ybar)`` for the system (ZtZ − n z̄z̄ᵀ + λI) W = c and the
    intercept b = (s + ȳ) − (a + z̄)ᵀW. With an intercept, z̄ = u/n and ȳ = v/n are the means
    of the shifted rows, ZtZ is returned as it is and c = ZₛᵀYₛ − n z̄ȳᵀ (the centred sums do
    not depend on the shift). Without one, z̄ = ȳ = 0 and the raw sums are rebuilt:
    ZᵀZ = ZₛᵀZₛ + auᵀ + uaᵀ + n aaᵀ and ZᵀY = ZₛᵀYₛ + usᵀ + avᵀ + n asᵀ (the first only
    where a ≠ 0, so that sparse sums, never shifted, stay sparse).
    """
    if fit_intercept:
        zbar, ybar = zsum / n, ysum / n
        c = ZtY - n * np.outer(zbar, ybar)
    else:
        zbar, ybar = np.zeros_like(zsum), np.zeros_like(ysum)
        c = ZtY + np.outer(zsum, s) + np.outer(a, ysum) + n * np.outer(a, s)
        if a.any():
            ZtZ = ZtZ + np.outer(a, zsum) + np.outer(zsum, a) + n * np.outer(a, a)
    return ZtZ, c, zbar, ybar


class StreamingFeatureRidge(RegressorScoreMixin, MultiOutputMixin, RegressorMixin, BaseEstimator):
    r"""Ridge regression on an approximate feature map, trained block by block (strategy ⑤).

    Each call ``partial_fit(X_block, y_block)`` computes :math:`Z = \psi(X_{\text{block}})` on the
    fly and adds :math:`Z^T Z` and :math:`Z^T y` to running sums; nothing of size n is kept. The
    weights solve

    .. math:: (Z^T Z + \lambda I)\, w = Z^T y,

    the equations of :class:`~kernelcourse.ridge.FeatureRidge` (penalty λ‖w‖² on the sum of
    squared errors; with ``fit_intercept=True``, Z and y are centred and the intercept is not
    penalized), which is exactly what :meth:`fit` on all the rows at once would give, whatever
    the blocks. The solve is lazy: it
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
        The feature map ψ. A fitted transformer is used as it is (one fitted on a DataFrame
        takes X with the same columns); an unfitted one is cloned and fitted on the first
        block; None means ``RandomFourierFeatures(n_components=100)`` (RBF kernel,
        γ = 1 / n_features). A data-dependent map (Nyström, random binning, anything
        but random Fourier features) fitted on a first block of fewer than
        10 D rows warns: it saw too few points to place its D features. Fit it on a sample of
        the whole data first instead.
    lam : float > 0, default=1.0
        The ridge λ on the sum of squared errors (penalty λ‖w‖², as in
        :class:`~kernelcourse.ridge.FeatureRidge` and
        :class:`~kernelcourse.distributed.DaskFeatureRidge`).
    fit_intercept : bool, default=False
        Fit an unpenalized intercept (the features and targets are centred in the solve).
    block_size : int, default=10000
        Rows per block when :meth:`fit` streams an in-memory array.
    tol : float > 0, default=1e-6
        Sparse features only: relative residual at which conjugate gradients stop.
    max_iter : int >= 1, default=500
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

    See Also
    --------
    kernelcourse.ridge.FeatureRidge
        The same model fitted on all rows at once.
    kernelcourse.distributed.DaskFeatureRidge
        The same model on a ``dask.array``, chunks processed on a cluster.
    NystroemKRR
        Nyström kernel ridge regression by FALKON, when n is large but M centres suffice.

    References
    ----------
    A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS 2007.
    Strategy ⑤ (approximate features on the fly): :doc:`chapter 3 </book/03_kernel_trick_six_ways>`
    and :doc:`chapter 11 </book/11_scaling_up>`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomFourierFeatures
    >>> from kernelcourse.scale import StreamingFeatureRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    >>> rff = RandomFourierFeatures(gamma=1.0, n_components=100, random_state=0)
    >>> model = StreamingFeatureRidge(rff, lam=1e-3, fit_intercept=True)
    >>> for start in range(0, 500, 100):  # one block of rows at a time
    ...     _ = model.partial_fit(X[start:start + 100], y[start:start + 100])
    >>> print(model.n_samples_seen_, round(model.score(X, y), 2))
    500 0.98
    """

    _parameter_constraints = {
        "features": [None, HasMethods(["fit", "transform"])],
        "lam": [real_constraint(0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "block_size": [count_constraint()],
        "tol": [real_constraint(0, None, closed="neither")],
        "max_iter": [count_constraint()],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        features=None,
        *,
        lam=1.0,
        fit_intercept=False,
        block_size=10000,
        tol=1e-6,
        max_iter=500,
        random_state=None,
    ):
        self.features = features
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.block_size = block_size
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _reset(self):
        names = ("_ZtZ", "_Zty", "_zsum", "_ysum", "_zshift", "_yshift", "_solution")
        for name in ("features_", "n_samples_seen_", *names):
            if name in vars(self):
                delattr(self, name)

    def fit(self, X, y):
        """Stream ``X`` in blocks of ``block_size`` rows through :meth:`partial_fit`, then
        solve."""
        self._reset()
        self._validate_params()  # block_size is used before partial_fit checks it
        # (y = [1, 'a'] got numpy's "could not convert string to float: 'a'")
        check_fit_input(X, y, regression=True)
        X, y = validate_data(
            self, X, y, multi_output=True, y_numeric=True, dtype=[np.float64, np.float32]
        )
        names = vars(self).get("feature_names_in_")  # the blocks below are plain arrays
        # a lost phase warns once for the fit, with the largest argument of all blocks (each
        # block warned on its own)
        phase = LostPhase()
        for start in range(0, len(X), self.block_size):
            self._partial_fit(
                X[start : start + self.block_size], y[start : start + self.block_size], names, phase
            )
        phase.warn()
        if names is not None:
            self.feature_names_in_ = names
        return self.solve()

    def _first_features(self, X, names):
        if self.features is None:
            return RandomFourierFeatures(n_components=100, random_state=self.random_state).fit(X)
        if _is_fitted(self.features):
            return _copy_fitted_map(self.features, names, type(self).__name__)
        features = clone(self.features).fit(X)
        if not isinstance(features, _DATA_INDEPENDENT_MAPS):
            # (the first row's lost phase, if any, is the first block's warning)
            D = transform_unwarned(features, X[:1])[0].shape[1]
            if len(X) < 10 * D:
                warnings.warn(
                    f"{type(features).__name__} was fitted on the first block only, "
                    f"{len(X)} rows for D = {D} features (fewer than 10 D): a data-dependent "
                    "map needs a representative sample. Fit it on a sample of all the data "
                    "and pass the fitted map, or make the first block larger.",
                    UserWarning,
                    stacklevel=find_stack_level(),
                )
        return features

    def partial_fit(self, X, y):
        """Add one block of rows to the sufficient statistics ZᵀZ, Zᵀy, Σz, Σy and n, taken
        about the first row seen (no solve)."""
        return self._partial_fit(X, y)

    def _partial_fit(self, X, y, names=None, phase=None):
        # names: the columns of the X that fit streams in plain-array blocks; phase: fit's
        # LostPhase, which warns once after all blocks (None: this call warns for itself)
        first = not hasattr(self, "_ZtZ")
        if first:
            self._validate_params()
        check_fit_input(X, y, regression=True)
        X, y = validate_data(
            self,
            X,
            y,
            multi_output=True,
            y_numeric=True,
            reset=first,
            dtype=[np.float64, np.float32],
        )
        Y = np.asarray(y, dtype=np.float64)
        if first:
            self._single_output = Y.ndim == 1
            self.features_ = self._first_features(X, vars(self).get("feature_names_in_", names))
        Y = Y[:, None] if Y.ndim == 1 else Y
        if not first and Y.shape[1] != self._Zty.shape[1]:
            raise ValueError(
                f"y has {Y.shape[1]} targets but earlier blocks had {self._Zty.shape[1]}."
            )
        own = phase is None
        phase = LostPhase() if own else phase
        Z = refuse_complex_features(phase.transform(self.features_, X))
        if own:
            phase.warn()
        Z = sp.csr_matrix(Z, dtype=np.float64) if sp.issparse(Z) else np.asarray(Z, np.float64)
        if first:
            _refuse_no_features(Z, self.features_)
            D = Z.shape[1]
            self._ZtZ = sp.csr_matrix((D, D)) if sp.issparse(Z) else np.zeros((D, D))
            self._Zty = np.zeros((D, Y.shape[1]))
            self._zsum = np.zeros(D)
            self._ysum = np.zeros(Y.shape[1])
            self.n_samples_seen_ = 0
            # The sums are taken about the first row (the shifted-data method, Chan, Golub &
            # LeVeque 1983): centring raw sums at the end, ZᵀZ − n z̄z̄ᵀ, lost about
            # 2 log₁₀(|mean| / spread) digits, so that y near 1e12 gave an intercept fit off
            # by units. Sparse features keep their sparsity, unshifted.
            dense = not sp.issparse(Z)
            self._zshift = Z[0].copy() if dense else np.zeros(D)
            self._yshift = Y[0].copy()
        if not sp.issparse(Z):
            Z = Z - self._zshift
        Y = Y - self._yshift
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
        a, s = self._zshift, self._yshift
        sums = (self._ZtZ, self._Zty, self._zsum, self._ysum, n)
        ZtZ, c, zbar, ybar = _unshifted_sums(*sums, a, s, self.fit_intercept)
        lam = float(self.lam)
        if sp.issparse(ZtZ):
            G = ZtZ

            def matvec(V):  # (ZᵀZ − n z̄z̄ᵀ + λI) V, the centring as a rank-one term
                return G @ V - n * np.outer(zbar, zbar @ V) + lam * V

            diag = (G.diagonal() - n * zbar**2 + lam)[:, None]
            result = solvers.block_cg(
                matvec, c, preconditioner=lambda R: R / diag, max_iter=self.max_iter, tol=self.tol
            )
            solvers.warn_unconverged("StreamingFeatureRidge (block-Jacobi CG)", result, self.tol)
            W, self.history_, self.n_iter_ = result.x, np.asarray(result.history), result.n_iter
        else:
            G = ZtZ - n * np.outer(zbar, zbar)
            try:
                W = solve_regularized_psd(G, c, lam, overwrite_a=True, name="Z_cᵀZ_c")
            except np.linalg.LinAlgError:
                # not positive definite (more features than samples and a tiny λ): G was
                # factored in place; built again, it gets the warned least-squares solution
                G = ZtZ - n * np.outer(zbar, zbar)
                W = solve_regularized_psd(G, c, lam, name="Z_cᵀZ_c")
            self.history_, self.n_iter_ = None, 0
        b = (s + ybar) - (a + zbar) @ W if self.fit_intercept else np.zeros_like(ybar)
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
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        coef, intercept = self.coef_, self.intercept_
        Z = refuse_complex_features(self.features_.transform(X))
        Z = sp.csr_matrix(Z, dtype=np.float64) if sp.issparse(Z) else np.asarray(Z, np.float64)
        return Z @ coef.T + intercept


# -- the data set of the large-scale benchmark -----------------------------------------------------
