r"""Random Fourier features (Rahimi & Recht 2007;
:doc:`chapter 5 </book/05_bochner_random_fourier_features>`).

For a shift-invariant kernel with spectral density p (see :mod:`kernelcourse.spectral`), draw
frequencies :math:`\omega_1, \dots, \omega_D \sim p` (the rows of Ω) and phases
:math:`b_i \sim U[0, 2\pi]`; then :math:`\psi(x)^T\psi(y) \approx K(x, y)` for the maps of
Bochner's theorem:

* ``"cos"``: :math:`\psi(x) = \sqrt{2/D}\,\cos(\Omega x + b)` (Rahimi & Recht 2007);
* ``"cossin"``: :math:`[\cos(\Omega_S x); \sin(\Omega_S x)] / \sqrt{S}` with S = D/2 frequencies;
* ``"complex"``: :math:`\exp(-i\Omega x)/\sqrt D`, complex valued, with
  :math:`\psi(x)^T \overline{\psi(y)} \approx K(x, y)`.
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import threading

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import devices
from .._array_api import device_of, namespace_of, to_numpy
from .._threads import for_each_row_block
from .._validation import (
    all_finite,
    as_float_matrix,
    cast_to,
    check_bool,
    check_cosine_arguments,
    check_count,
    check_memory,
    count_constraint,
    gamma_constraint,
    kernel_params_of,
    naming,
    real_constraint,
    validate_data,
    warn_if_phase_lost,
)
from ..kernels import Kernel, resolve_kernel
from ..spectral import spectral_measure
from ._cosine import _beyond_exact_reduction, _CosinePass

__all__ = ["RandomFourierFeatures", "fourier_features"]

MAPS = ("cos", "cossin", "complex")
SAMPLINGS = ("mc", "qmc", "orthogonal", "leverage")

_TWO_PI = 2.0 * math.pi
# Elements per row block of the (n, D) output (2 MB in float32): large enough that the
# per-block numpy calls cost nothing next to the work, small enough that each thread's
# product block stays in cache for the element-wise pass that follows it.
_BLOCK_ELEMENTS = 1 << 19


# Leverage scoring beyond this much arithmetic (minutes at ~10 GFLOP/s) is refused up front.
_LEVERAGE_MAX_FLOPS = 2e12


def _physical_memory():
    """Bytes of physical memory, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _as_finite_vector(value, name, D, dtype):
    """A scalar or a length-D vector, as a contiguous length-D array of ``dtype``."""
    arr = np.asarray(value)
    if not (np.issubdtype(arr.dtype, np.number) and not np.iscomplexobj(arr)):
        raise TypeError(f"{name} must be a real number or array, got dtype {arr.dtype}.")
    if arr.shape not in ((), (1,), (D,)):
        raise ValueError(
            f"{name} must be a number or have shape ({D},), one entry per column of W, "
            f"got shape {arr.shape}."
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity.")
    # in float32, 1e300 would become infinity (and every feature NaN)
    arr = cast_to(arr.astype(np.float64), dtype, name)
    return np.ascontiguousarray(np.broadcast_to(arr, (D,)))


def fourier_features(X, W, offset, scale, *, exact=False, n_threads=None):
    r"""``scale * cos(X @ W + offset)`` computed block by block, in the dtype of ``X``.

    Each row block costs one small GEMM, into a block of the thread's own, and one compiled
    element-wise pass, which adds the offset and takes the cosine while that block is in
    cache, and writes the output. Blocks are shared among ``n_threads`` threads (BLAS and the
    compiled pass release the GIL). This is the kernel of
    :meth:`RandomFourierFeatures.transform`. The cosine is an exact range reduction followed
    by a polynomial, compiled for the vector width of the CPU it runs on (see the module
    ``kernelcourse.features._cosine``); it agrees with ``np.cos`` to a few units of
    round-off. The reduction is exact while :math:`|t| < 6.4\cdot10^3` in float32
    and :math:`4.2\cdot10^8` in float64; rows of X that may give a larger argument (bounded
    by :math:`\|x\|\max_j\|\omega_j\| + \max_j|b_j|`, e.g. raw timestamps) are evaluated
    with ``np.cos`` instead, so the result is right for every finite input.

    Parameters
    ----------
    X : array-like of shape (n, d)
        float32 stays float32; anything else is computed in float64.
    W : array-like of shape (d, D)
        Ωᵀ, cast to the dtype of X.
    offset : float or array-like of shape (D,)
    scale : float or array-like of shape (D,)
    exact : bool
        Use numpy's cosine instead of the compiled pass (slower; a reference).
    n_threads : int or None
        None means every CPU this process may run on.
    """
    exact = check_bool(exact, "exact")
    X = as_float_matrix(X, "X")
    dtype = X.dtype
    # cast_to: Ω of 1e50 became infinity in float32, with only numpy's cast warning
    W = cast_to(as_float_matrix(W, "W"), dtype, "W", underflow=False)
    if W.shape[0] != X.shape[1]:
        raise ValueError(
            f"W must have shape (d, D) with d = {X.shape[1]}, the number of columns of X "
            f"(W is Ωᵀ), got shape {W.shape}."
        )
    D = W.shape[1]
    offset = _as_finite_vector(offset, "offset", D, dtype)
    scale = _as_finite_vector(scale, "scale", D, dtype)
    out, big = _fourier_features(X, W, offset, scale, exact, n_threads)
    warn_if_phase_lost(big, dtype)
    return out


def _fourier_features(X, W, offset, scale, exact, n_threads):
    """:func:`fourier_features` on checked input: X (n, d) and W (d, D) of one float dtype,
    offset and scale contiguous (D,) arrays of it. Returns the features and the largest
    magnitude of the arguments that went to numpy's cosine (0.0 when none), for the caller
    to warn about a lost phase once, from its own line: the blocks run on worker threads,
    and holding their warnings back with ``warnings.catch_warnings`` is not thread-safe (two
    transforms at once, as dask's threads run them, left every later warning swallowed)."""
    n, D = X.shape[0], W.shape[1]
    dtype = X.dtype
    out = np.empty((n, D), dtype=dtype)
    # BLAS computes a product with one column or one row by matrix-vector kernels, which
    # round a row otherwise than a matrix product does (and by its place in the block): a
    # zero column, or the row twice, keeps every product a matrix product, so the features
    # of a row do not depend on the rows it comes with.
    width = max(D, 2)
    W = np.ascontiguousarray(W if D > 1 else np.hstack([W, np.zeros_like(W)]))
    X = np.ascontiguousarray(X)  # row blocks that BLAS reads as they are
    block = max(4, _BLOCK_ELEMENTS // max(D, 1))
    fallback = _beyond_exact_reduction(X, W, offset)
    # Prepared once: Python work inside a block holds the GIL the other threads wait on.
    cosine = _CosinePass(out, offset, scale, fallback, exact)
    # Each thread multiplies into a block of its own, reused from block to block, so the
    # product is written to memory already in cache; only the features go out to the output.
    scratch = threading.local()
    largest = [0.0]  # the largest argument given to numpy's cosine, by any thread

    def work(start, stop):
        t = getattr(scratch, "block", None)
        if t is None:
            t = scratch.block = np.empty((block, width), dtype=dtype)
            scratch.address = t.ctypes.data
        rows = X[start:stop] if stop - start > 1 else X[[start, start]]
        with np.errstate(over="ignore", invalid="ignore"):  # overflow raises in _cos_block
            np.matmul(rows, W, out=t[: len(rows)])
        big = cosine(t[: stop - start, :D], start, scratch.address)
        if big > largest[0]:  # (a race here can only lose a smaller value)
            largest[0] = big

    for_each_row_block(n, block, work, n_threads)
    return out, largest[0]


class RandomFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random Fourier features of a shift-invariant kernel
    (:doc:`chapter 5 </book/05_bochner_random_fourier_features>`).

    :math:`\psi(x) = \sqrt{2/D}\,\cos(\Omega x + b)` with the rows of Ω drawn from the kernel's
    spectral measure (Bochner's theorem) and :math:`b_i \sim U[0, 2\pi]`, so that
    :math:`\mathbf E[\psi(x)^T\psi(y)] = K(x, y)` and, by Hoeffding's inequality
    (:doc:`chapter 6 </book/06_approximation_quality>`),
    :math:`P(|K(x, y) - \psi(x)^T\psi(y)| \ge a) \le 2e^{-Da^2/8}`.

    For ``kernel="rbf"``, ``map="cos"``, ``sampling="mc"`` the random draws are those of
    :class:`sklearn.kernel_approximation.RBFSampler` with the same ``random_state``.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "matern"} or Kernel, default="rbf"
        Shift-invariant kernel: RBF, Laplacian, Matern or a positive multiple ``c * k``.
    gamma : float > 0, "scale" or None, default=None
        γ of the RBF and Laplacian kernels; None means 1 / n_features and "scale"
        1 / (n_features · Var X), the variance of all the entries of X (as ``RBFSampler``).
    n_components : int >= 1, default=100
        Number D of output features (even for ``map="cossin"``).
    map : {"cos", "cossin", "complex"}, default="cos"
        Feature map, see the module docstring. ``"complex"`` returns complex arrays.
    sampling : {"mc", "qmc", "orthogonal", "leverage"}, default="mc"
        How Ω is drawn: i.i.d.; scrambled quasi-Monte Carlo (Avron et al. 2016); orthogonal
        random features (Yu et al. 2016, isotropic kernels); or leverage-score weighted
        sampling (Avron et al. 2017), which draws a pool of ``pool_factor * D`` frequencies,
        scores each by its ridge leverage on the training data and keeps D of them with
        importance weights, so the estimate of K stays unbiased.
    random_state : int, RandomState instance or None, default=None
    dtype : {None, numpy.float32, numpy.float64}, default=None
        Compute and output dtype; None keeps float32 inputs in float32 and uses float64 for
        everything else. float32 is the fastest choice when its precision suffices.
    kernel_params : dict or None, default=None
        Further parameters of a named kernel (``nu``, ``length_scale`` for "matern").
    ridge : float > 0, default=1e-3
        Ridge parameter λ of the leverage scores :math:`\tau_\lambda(\omega)` (``"leverage"``).
    pool_factor : int >= 1, default=8
        Size of the candidate pool relative to D (``"leverage"``).
    qmc_engine : {"halton", "sobol"}, default="halton"
    exact_cos : bool, default=False
        Evaluate the cosine with numpy's routine. The default reduces the argument to
        [−π, π] exactly and evaluates a polynomial in a compiled pass, equal to numpy's
        cosine to a few units of round-off and several times faster; rows whose arguments
        are too large for the exact reduction (beyond 6.4e3 in float32, 4.2e8 in float64)
        go to numpy's cosine. An argument that overflows raises a ValueError.
    n_threads : int >= 1 or None, default=None
        Threads sharing the row blocks of :meth:`transform`; None means the CPUs this
        process may run on.

    Attributes
    ----------
    kernel_ : Kernel
        The resolved kernel.
    omega_ : ndarray of shape (D, n_features)
        Ω, in the compute dtype (see ``dtype``), like ``offset_`` and ``weights_``. For
        ``map="cossin"`` rows D/2, …, D − 1 repeat rows 0, …, D/2 − 1.
    offset_ : ndarray of shape (D,)
        b. For ``map="cossin"`` it is 0 for the first half and −π/2 for the second
        (cos(t − π/2) = sin t), so ``"cos"`` and ``"cossin"`` share the formula
        :math:`\text{scale}\cdot\cos(\Omega x + b)`; zeros for ``"complex"``.
    weights_ : ndarray of shape (D,)
        Importance weight of each feature (ones unless ``sampling="leverage"``).
    n_features_in_ : int

    See Also
    --------
    kernelcourse.features.Nystroem
        Data-dependent features from landmark points.
    kernelcourse.features.RandomBinningFeatures
        Random grids: sparse features for the Laplacian kernel.
    kernelcourse.spectral.spectral_measure
        The distribution Ω is drawn from.
    kernelcourse.ridge.FeatureRidge
        Ridge regression on these features.

    Notes
    -----
    Deliberate differences from scikit-learn's ``RBFSampler``:

    * ``map="cossin"`` needs an even ``n_components`` (D/2 frequencies, each giving a cos and
      a sin feature) and raises on an odd one rather than dropping or adding a feature; the
      scikit-learn checks that refit with ``n_components=1`` are therefore expected to fail
      for that map (and only for it).
    * default γ: ``gamma=None`` means 1 / n_features (as scikit-learn's ``Nystroem`` and
      ``KernelRidge``), where ``RBFSampler`` defaults to γ = 1; ``gamma="scale"`` is the
      same as ``RBFSampler``'s.
    * float32 input stays float32 (so does ``RBFSampler``); a fixed ``dtype`` makes every
      output that dtype, and the ``preserves_dtype`` tag then lists only it.
    * dense input only: a scipy sparse X is refused with a TypeError that names X (random
      Fourier features of sparse data are dense, n × D, whatever X is).

    References
    ----------
    Rahimi & Recht (2007); Yu et al. (2016), "Orthogonal random features"; Avron, Sindhwani,
    Yang & Mahoney (2016), "Quasi-Monte Carlo feature maps"; Avron et al. (2017), "Random
    Fourier features for kernel ridge regression". Derived in
    :doc:`chapter 5 </book/05_bochner_random_fourier_features>` (Bochner's theorem, the three
    maps) and :doc:`chapter 6 </book/06_approximation_quality>` (the bounds).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomFourierFeatures
    >>> from kernelcourse.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> rff = RandomFourierFeatures(gamma=0.5, n_components=2000, random_state=0).fit(X)
    >>> Z = rff.transform(X)
    >>> print(Z.shape)
    (200, 2000)
    >>> print(np.abs(Z @ Z.T - RBF(gamma=0.5)(X)).max() < 0.15)
    True
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions({"rbf", "gaussian", "laplacian", "matern"}), Kernel],
        "gamma": gamma_constraint(),
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "map": [StrOptions(set(MAPS))],
        "sampling": [StrOptions(set(SAMPLINGS))],
        "random_state": ["random_state"],
        "dtype": [None, type, np.dtype],
        "kernel_params": [dict, None],
        "ridge": [real_constraint(0, None, closed="neither")],
        "pool_factor": [count_constraint()],
        "qmc_engine": [StrOptions({"halton", "sobol"})],
        "exact_cos": ["boolean"],
        "n_threads": [count_constraint(), None],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        n_components=100,
        map="cos",
        sampling="mc",
        random_state=None,
        dtype=None,
        kernel_params=None,
        ridge=1e-3,
        pool_factor=8,
        qmc_engine="halton",
        exact_cos=False,
        n_threads=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.map = map
        self.sampling = sampling
        self.random_state = random_state
        self.dtype = dtype
        self.kernel_params = kernel_params
        self.ridge = ridge
        self.pool_factor = pool_factor
        self.qmc_engine = qmc_engine
        self.exact_cos = exact_cos
        self.n_threads = n_threads

    def _compute_dtype(self, X):
        if self.dtype is None:
            return X.dtype if X.dtype == np.float32 else np.dtype(np.float64)
        dtype = np.dtype(self.dtype)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be None, numpy.float32 or numpy.float64, got {dtype}.")
        return dtype

    def fit(self, X, y=None):
        """Draw Ω and b (from the data too when ``sampling="leverage"``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        xp = namespace_of(X)
        if xp is not None:  # array-API input: the draws are made on the host, as below
            X = validate_data(self, X, dtype=[xp.float64, xp.float32])
            # leverage scores and gamma="scale" read the data; other fits only draw numbers
            whole = self.sampling == "leverage" or self.gamma == "scale"
            self._fit_host(devices.host_copy(X, whole=whole))
            fitted = {name: getattr(self, name) for name in ("omega_", "offset_", "weights_")}
            moved = devices.to_device(fitted, xp, device_of(X))
            # to_device widens floats to the device's widest; keep the compute dtype, as the
            # numpy path does (float32 input gives float32 Ω, b and weights)
            vars(self).update(
                {
                    name: xp.astype(value, xp.float32)
                    if fitted[name].dtype == np.float32
                    else value
                    for name, value in moved.items()
                }
            )
            return self
        return self._fit_host(X)

    def _fit_host(self, X):
        """:meth:`fit` on numpy (or array-like) X."""
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        dtype = self._compute_dtype(X)
        n_features = X.shape[1]
        D = check_count(self.n_components, "n_components")  # True is not a count
        # Ω, b and the weights (n_components=10**20 was numpy's "maximum dimension exceeded")
        check_memory(
            8 * D * (n_features + 2),
            f"random Fourier features with n_components={D} on {n_features} features",
            "lower n_components",
        )
        if self.map == "cossin" and D % 2:
            raise ValueError(
                f"n_components must be even for map='cossin' (D/2 frequencies, each giving a "
                f"cos and a sin feature), got {D}."
            )
        try:
            self.kernel_ = resolve_kernel(
                self.kernel,
                gamma=self.gamma,
                n_features=n_features,
                X=X,
                **kernel_params_of(self.kernel_params),
            )
        except TypeError as err:
            raise ValueError(str(err)) from err
        measure = spectral_measure(self.kernel_)
        rng = check_random_state(self.random_state)
        n_freq = D // 2 if self.map == "cossin" else D
        weights = np.ones(n_freq)
        if self.sampling == "leverage":
            omega, weights = self._leverage_sample(measure, X, n_freq, rng)
        else:
            omega = measure.sample(
                n_freq,
                n_features,
                method=self.sampling,
                random_state=rng,
                qmc_engine=self.qmc_engine,
            )
        if self.map == "cos":
            offset = rng.uniform(0, _TWO_PI, size=D)
        else:
            offset = np.zeros(D)
        if self.map == "cossin":
            omega = np.vstack([omega, omega])
            weights = np.concatenate([weights, weights])
            offset[n_freq:] = -math.pi / 2
        # Drawn in float64 and stored in the compute dtype, as RBFSampler stores its draws:
        # a float32 fit and a float64 fit hold the same draws up to rounding.
        with np.errstate(over="ignore"):  # the error below names the cause
            self.omega_ = omega.astype(dtype, copy=False)
        if not np.isfinite(self.omega_).all():
            # γ = 1e100 in float32 stored an infinite Ω, and transform blamed X
            raise ValueError(
                f"the frequencies Ω drawn for {self.kernel_!r} reach "
                f"{float(np.abs(omega).max()):.3g}, beyond the range of dtype={dtype.name}: "
                "its scale (gamma or 1/length_scale) is too large for that dtype; lower gamma "
                "(and rescale X) or use dtype=numpy.float64."
            )
        self.offset_ = offset.astype(dtype, copy=False)
        self.weights_ = weights.astype(dtype, copy=False)
        self._mass = measure.mass
        self._n_features_out = D
        return self

    def _leverage_sample(self, measure, X, n_freq, rng):
        r"""Avron et al. (2017): sample frequencies proportionally to the ridge leverage
        function :math:`\tau_\lambda(\omega) = p(\omega)\, z_\omega^*(\mathbf K + n\lambda I)^{-1}
        z_\omega`, estimated on a pool of M frequencies drawn from p.

        With at most 2000 training rows and Z (n × 2M) the pool's features on them,
        :math:`\tau_j = z_j^T (ZZ^T + n\lambda I)^{-1} z_j` is computed on the n × n side:
        one Cholesky factor L and :math:`\|L^{-1} z_j\|^2`, with Z built block by block of
        frequencies. Time O(nM(d + n) + n³) and memory O(n² + Md), linear in the pool, where
        the 2M × 2M form was cubic in it."""
        # a Python int: np.int8(100) * n_freq overflowed
        n_pool = check_count(self.pool_factor, "pool_factor") * n_freq
        d = X.shape[1]
        rows = X if len(X) <= 2000 else X[rng.choice(len(X), 2000, replace=False)]
        rows = rows.astype(np.float64)
        n = len(rows)
        block = max(1, (32 * 2**20) // (8 * 2 * n))  # frequencies per block: Z_b of ~32 MB
        need = 8 * (n_pool * d + 2 * n * n + 2 * n * min(block, n_pool) + 2 * n_pool)
        total = _physical_memory()
        if total is not None and need > total // 2:
            raise ValueError(
                f"sampling='leverage' with pool_factor={self.pool_factor} and "
                f"n_components={self.n_components} needs a pool of {n_pool} frequencies in "
                f"{d} dimensions, about {need / 2**30:.1f} GiB, more than half of this "
                f"machine's {total / 2**30:.1f} GiB; lower pool_factor or n_components."
            )
        flops = 2.0 * n_pool * n * (d + 2 * n)
        if flops > _LEVERAGE_MAX_FLOPS:
            raise ValueError(
                f"sampling='leverage' with pool_factor={self.pool_factor} and "
                f"n_components={self.n_components} scores a pool of {n_pool} frequencies on "
                f"{n} rows, about {flops:.1e} floating-point operations (hours); lower "
                "pool_factor or n_components."
            )
        pool = measure.sample(n_pool, d, method="mc", random_state=rng)
        # k(0) = mass times the average of cos(ωᵀ(x − y)): without it a multiple c·k would
        # be scored with the ridge λ/c instead of λ.
        pool_scale = math.sqrt(measure.mass / n_pool)

        def features(start):
            with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
                P = rows @ pool[start : start + block].T
            # a heavy-tailed pool (Cauchy, Student-t) on large X made ωᵀx infinite: the
            # Cholesky factor of ZZᵀ failed in scipy with "array must not contain infs or NaNs"
            # (the refusal only; a lost phase is transform's warning, on the data it maps)
            check_cosine_arguments(P, np)
            return np.hstack([np.cos(P), np.sin(P)]) * pool_scale

        # ZZᵀ = Σ_b Z_b Z_bᵀ ≈ K on those rows; τ_j sums the cos and the sin column of ω_j.
        G = np.zeros((n, n))
        for start in range(0, n_pool, block):
            Zb = features(start)
            G += Zb @ Zb.T
        G[np.diag_indices_from(G)] += n * self.ridge
        try:
            L = linalg.cholesky(G, lower=True)
        except linalg.LinAlgError:
            # ZZᵀ is singular (duplicate rows, or rows closer than the kernel resolves) and
            # nλ below its round-off: scipy's "leading minor is not positive definite"
            raise ValueError(
                f"sampling='leverage': ZZᵀ + nλI is numerically singular with ridge="
                f"{self.ridge!r} (nλ = {n * self.ridge:.3g} against k(0) = {measure.mass:.3g}"
                "; duplicate rows of X make ZZᵀ singular); raise ridge, e.g. to 1e-6."
            ) from None
        tau = np.empty(n_pool)
        for start in range(0, n_pool, block):
            W = linalg.solve_triangular(L, features(start), lower=True)
            sq = np.einsum("ij,ij->j", W, W)
            half = sq.size // 2
            tau[start : start + half] = sq[:half] + sq[half:]
        tau = np.clip(tau, 0, None) + 1e-12
        q = tau / tau.sum()
        idx = rng.choice(n_pool, size=n_freq, replace=True, p=q)
        # Importance weights √(p(ω)/q(ω)): on the pool p is uniform, 1/M, so a feature drawn
        # with probability q_j gets weight² 1/(M q_j) and E_j[w_j² cos(ω_jᵀΔ)] =
        # (1/M) Σ_j cos(ω_jᵀΔ), the pool's unbiased estimate of k(Δ)/k(0).
        return pool[idx], np.sqrt(1.0 / (n_pool * q[idx]))

    def transform(self, X):
        """ψ(X): the random features of the rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Psi : ndarray of shape (n_samples, n_components)
            In the compute dtype (complex for ``map="complex"``); an array of X's library on
            X's device for array-API input (``sklearn.set_config(array_api_dispatch=True)``),
            computed there with the library's cosine.
        """
        check_is_fitted(self)
        xp = namespace_of(X, fitted=self.omega_, called=(self, "transform"))
        if xp is not None:
            X = validate_data(self, X, reset=False, dtype=[xp.float64, xp.float32])
            return devices.fourier_transform(self, X, xp)
        out, big, warn = self._transform_unwarned(X)
        # once for all passes, at the user's line (past fit_transform, Pipeline, set_output)
        warn(big)
        return out

    def _transform_unwarned(self, X):
        """:meth:`transform` of numpy (or array-like) X with the lost-phase warning left to
        the caller: returns ψ(X), the largest argument given to numpy's cosine and
        ``warn``, which warns for such a largest argument. A caller that maps X block by
        block (:class:`~kernelcourse.distributed.DaskFeatureRidge`, on dask's worker
        threads) warns once, from its own thread, for the largest of all blocks."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        dtype = self._compute_dtype(X)
        X = self._in_compute_dtype(X, dtype)
        W = self._frequencies_in(dtype)

        def features(offset, scale):
            # X and W were checked here and at fit: skip fourier_features' own checks.
            return _fourier_features(
                X, W, offset.astype(dtype), scale.astype(dtype), self.exact_cos, self.n_threads
            )

        scale = self._feature_scale(dtype)
        if self.map == "complex":
            # exp(−it) = cos t − i sin t and cos(t + π/2) = −sin t.
            re, big_re = features(self.offset_, scale)
            im, big_im = features(self.offset_ + math.pi / 2, scale)
            big = max(big_re, big_im)
            ctype = np.complex64 if dtype == np.float32 else np.complex128
            out = np.empty(re.shape, dtype=ctype)
            out.real, out.imag = re, im
        else:
            out, big = features(self.offset_, scale)
        return out, big, functools.partial(warn_if_phase_lost, dtype=dtype)

    def _in_compute_dtype(self, X, dtype, xp=np):
        """Validated (finite) X cast to the compute dtype, on numpy or any array library, or
        a ValueError naming X where the cast overflows (float64 X beyond float32's range
        became infinite, and the error blamed the frequencies)."""
        if X.dtype == dtype:
            return X
        return cast_to(
            X,
            dtype,
            "X",
            xp=None if xp is np else xp,
            advice="the cosine's arguments ωᵀx + b would overflow: use dtype=numpy.float64 "
            "or rescale X.",
            underflow=False,  # entries of 1e-40 move no feature beyond its round-off
        )

    def _frequencies_in(self, dtype, xp=np):
        """Ωᵀ in the compute dtype, on numpy or any array library (Ω is then of that
        library, as fitted there), or a ValueError naming Ω where the cast overflows: a
        float64 fit (Ω up to 1e50, say) applied to float32 X made Ω infinite, and the
        features NaN."""
        return cast_to(
            self.omega_,
            dtype,
            "Ω",
            xp=None if xp is np else xp,
            advice="these frequencies need the float64 of their fit: transform float64 X, "
            "or fit with dtype=numpy.float64.",
            underflow=False,  # entries of 1e-40 move no feature beyond its round-off
        ).T

    def _feature_scale(self, dtype):
        r"""The factor of each feature in ``dtype``: :math:`\sqrt{2c/D}\,w_j`, or
        :math:`\sqrt{c/D}\,w_j` for the complex map (c the kernel's mass k(0), w the
        importance weights), computed in float64 as :math:`\sqrt{2/D}\sqrt c\,w_j`."""
        D = self.n_components
        base = math.sqrt((1.0 if self.map == "complex" else 2.0) / D) * math.sqrt(self._mass)
        # 2c overflowed for c near the largest float64 (NaN features), and √c · w in the
        # float32 weights overflowed for c > 1e76 or so (infinite features), both silently
        # (on the host: the device path of transform uses this too, with weights on X's device)
        scale = base * to_numpy(self.weights_).astype(np.float64)
        with np.errstate(over="ignore"):
            out = scale.astype(dtype)
        if not (np.isfinite(scale).all() and np.isfinite(out).all()):
            raise ValueError(
                f"the feature scale √(2c/D) of the kernel {self.kernel_!r} (mass c = "
                f"{self._mass:.3g}) reaches {float(np.max(scale)):.3g}, beyond the range of "
                f"dtype={np.dtype(dtype).name}; use dtype=numpy.float64 or divide the kernel "
                "by a constant."
            )
        return out

    def approximate_kernel(self, X, Y=None):
        r""":math:`\psi(X)\psi(Y)^T` (real part for the complex map), the estimate of K."""
        A = self.transform(X)
        B = A if Y is None else naming("Y", self.transform, Y)
        xp = namespace_of(A)
        if xp is not None:
            return xp.real(A @ xp.conj(B).T) if self.map == "complex" else A @ B.T
        with np.errstate(over="ignore", invalid="ignore"):  # the error below says why
            K = np.real(A @ np.conj(B).T)
        if not all_finite(K):
            # features of a multiple c·k near the dtype's largest value: the products
            # overflowed to infinity (or NaN) with only numpy's warning
            fix = "use dtype=numpy.float64 or " if K.dtype == np.float32 else ""
            raise ValueError(
                f"the kernel estimate ψ(X)ψ(Y)ᵀ overflows {K.dtype}: the kernel "
                f"{self.kernel_!r} takes values up to its mass {self._mass:.3g}; {fix}divide "
                "the kernel by a constant."
            )
        return K

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Complex output for map="complex". Otherwise float32 in, float32 out (dtype=None), or
        # always the fixed dtype, which then is the only one preserved.
        if self.map == "complex":
            preserved = []
        elif self.dtype is None:
            preserved = ["float64", "float32"]
        else:
            try:
                preserved = [np.dtype(self.dtype).name]
            except TypeError:
                preserved = []  # an invalid dtype: fit will say so
        tags.transformer_tags.preserves_dtype = preserved
        tags.array_api_support = True
        return tags
