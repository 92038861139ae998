r"""Random Fourier features (Rahimi & Recht 2007; lectures 000, 001, 002, 003).

For a shift-invariant kernel with spectral density p (see :mod:`kernelcourse.spectral`), draw
frequencies :math:`\omega_1, \dots, \omega_D \sim p` (the rows of Ω) and phases
:math:`b_i \sim U[0, 2\pi]`; then :math:`\psi(x)^T\psi(y) \approx K(x, y)` for the maps of
lecture 001:

* ``"cos"``: :math:`\psi(x) = \sqrt{2/D}\,\cos(\Omega x + b)` (lecture 000);
* ``"cossin"``: :math:`[\cos(\Omega_S x); \sin(\Omega_S x)] / \sqrt{S}` with S = D/2 frequencies;
* ``"complex"``: :math:`\exp(-i\Omega x)/\sqrt D`, complex valued, with
  :math:`\psi(x)^T \overline{\psi(y)} \approx K(x, y)`.
"""

from __future__ import annotations

import math
import numbers
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..kernels import Kernel, resolve_kernel
from ..spectral import spectral_measure

__all__ = ["RandomFourierFeatures", "fourier_features"]

MAPS = ("cos", "cossin", "complex")
SAMPLINGS = ("mc", "qmc", "orthogonal", "leverage")

_TWO_PI = 2.0 * math.pi
# Elements per row block of the (n, D) output (4 MB in float32): large enough that the
# per-block numpy calls cost nothing next to the work, small enough that each thread's
# blocks stay in the last-level cache for the element-wise passes that follow the product.
_BLOCK_ELEMENTS = 1 << 20


def _cos_block(out, buf64, buf32, scale, exact):
    """``out ← scale · cos(out)`` in place.

    float32 blocks use numpy's vectorized float32 cosine. float64 blocks are first reduced to
    [−π, π] in float64 (t − 2π·round(t / 2π), exact to ~1e-15 for the arguments met here) and
    then evaluated with the float32 cosine, whose absolute error on [−π, π] is below 1e-7;
    ``exact=True`` uses numpy's float64 cosine instead (slower, to round-off).
    """
    if out.dtype == np.float32 or exact:
        np.cos(out, out=out)
        out *= scale
        return
    np.multiply(out, 1.0 / _TWO_PI, out=buf64)
    np.rint(buf64, out=buf64)
    buf64 *= _TWO_PI
    out -= buf64
    np.copyto(buf32, out, casting="same_kind")
    np.cos(buf32, out=buf32)
    np.multiply(buf32, scale, out=out)


def fourier_features(X, W, offset, scale, *, exact=False, n_threads=2):
    r"""``scale * cos(X @ W + offset)`` computed block by block, in the dtype of ``X``.

    The offset rides along in the matrix product (X gets a column of ones, W a row b), so
    each row block costs one small GEMM and a few in-place element-wise passes that run while
    the block is in cache. Blocks are shared among ``n_threads`` threads (numpy's ufuncs and
    BLAS release the GIL). This is the kernel of :meth:`RandomFourierFeatures.transform`; it
    agrees with the plain formula to about 1e-7 in cos (see :func:`_cos_block`).

    Parameters
    ----------
    X : ndarray of shape (n, d), float32 or float64
    W : ndarray of shape (d, D), same dtype (Ωᵀ)
    offset : ndarray of shape (D,)
    scale : float or ndarray of shape (D,)
    exact : bool
        float64 only: use numpy's float64 cosine (to round-off) rather than range reduction in
        float64 followed by the float32 cosine.
    n_threads : int
    """
    n, D = X.shape[0], W.shape[1]
    dtype = X.dtype
    out = np.empty((n, D), dtype=dtype)
    Xa = np.empty((n, X.shape[1] + 1), dtype=dtype)
    Xa[:, :-1] = X
    Xa[:, -1] = 1
    Wa = np.vstack([W, np.asarray(offset, dtype=dtype)[None, :]]).astype(dtype, copy=False)
    scale = np.asarray(scale, dtype=dtype)
    block = max(4, _BLOCK_ELEMENTS // max(D, 1))
    starts = list(range(0, n, block))
    n_threads = max(1, min(int(n_threads), len(starts)))

    def work(chunk):
        buf64 = np.empty((block, D), dtype=dtype)
        buf32 = np.empty((block, D), dtype=np.float32)
        for s in chunk:
            e = min(s + block, n)
            o = out[s:e]
            np.matmul(Xa[s:e], Wa, out=o)
            _cos_block(o, buf64[: e - s], buf32[: e - s], scale, exact)

    if n_threads == 1:
        work(starts)
        return out
    # Contiguous halves per thread; BLAS limited to one thread (no oversubscription).
    per = -(-len(starts) // n_threads)
    chunks = [starts[i : i + per] for i in range(0, len(starts), per)]
    with threadpool_limits(limits=1, user_api="blas"):
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            for f in [pool.submit(work, c) for c in chunks]:
                f.result()
    return out


class RandomFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random Fourier features of a shift-invariant kernel (lectures 000 and 001).

    :math:`\psi(x) = \sqrt{2/D}\,\cos(\Omega x + b)` with the rows of Ω drawn from the kernel's
    spectral measure (Bochner's theorem) and :math:`b_i \sim U[0, 2\pi]`, so that
    :math:`\mathbf E[\psi(x)^T\psi(y)] = K(x, y)` and, by Hoeffding's inequality (lecture 000),
    :math:`P(|K(x, y) - \psi(x)^T\psi(y)| \ge a) \le 2e^{-Da^2/8}`.

    For ``kernel="rbf"``, ``map="cos"``, ``sampling="mc"`` the random draws are those of
    :class:`sklearn.kernel_approximation.RBFSampler` with the same ``random_state``.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "matern"} or Kernel, default="rbf"
        Shift-invariant kernel: RBF, Laplacian, Matern or a positive multiple ``c * k``.
    gamma : float > 0 or None, default=None
        γ of the RBF and Laplacian kernels; None means 1 / n_features.
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
        float64 only: evaluate the cosine with numpy's float64 routine. The default reduces
        the argument to [−π, π] in float64 and evaluates the float32 cosine, which changes
        each feature by less than :math:`10^{-7}\sqrt{2/D}` and is several times faster.
    n_threads : int >= 1, default=2
        Threads sharing the row blocks of :meth:`transform`.

    Attributes
    ----------
    kernel_ : Kernel
        The resolved kernel.
    omega_ : ndarray of shape (D, n_features)
        Ω. For ``map="cossin"`` rows D/2, …, D − 1 repeat rows 0, …, D/2 − 1.
    offset_ : ndarray of shape (D,)
        b. For ``map="cossin"`` it is 0 for the first half and −π/2 for the second
        (cos(t − π/2) = sin t), so ``"cos"`` and ``"cossin"`` share the formula
        :math:`\text{scale}\cdot\cos(\Omega x + b)`; zeros for ``"complex"``.
    weights_ : ndarray of shape (D,)
        Importance weight of each feature (ones unless ``sampling="leverage"``).
    n_features_in_ : int

    References
    ----------
    Rahimi & Recht (2007); Yu et al. (2016), "Orthogonal random features"; Avron, Sindhwani,
    Yang & Mahoney (2016), "Quasi-Monte Carlo feature maps"; Avron et al. (2017), "Random
    Fourier features for kernel ridge regression". Lectures 000 (ψ(x) = √(2/D) cos(Ωx + b))
    and 001 (Bochner's theorem, the three maps).
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions({"rbf", "gaussian", "laplacian", "matern"}), Kernel],
        "gamma": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "map": [StrOptions(set(MAPS))],
        "sampling": [StrOptions(set(SAMPLINGS))],
        "random_state": ["random_state"],
        "dtype": [None, type, np.dtype],
        "kernel_params": [dict, None],
        "ridge": [Interval(numbers.Real, 0, None, closed="neither")],
        "pool_factor": [Interval(numbers.Integral, 1, None, closed="left")],
        "qmc_engine": [StrOptions({"halton", "sobol"})],
        "exact_cos": ["boolean"],
        "n_threads": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        kernel="rbf",
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
        n_threads=2,
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
        self._validate_params()
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        self._compute_dtype(X)
        n_features = X.shape[1]
        D = self.n_components
        if self.map == "cossin" and D % 2:
            raise ValueError(
                f"n_components must be even for map='cossin' (D/2 frequencies, each giving a "
                f"cos and a sin feature), got {D}."
            )
        try:
            self.kernel_ = resolve_kernel(
                self.kernel, gamma=self.gamma, n_features=n_features, **(self.kernel_params or {})
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
        self.omega_ = omega
        self.offset_ = offset
        self.weights_ = weights
        self._mass = measure.mass
        self._n_features_out = D
        return self

    def _leverage_sample(self, measure, X, n_freq, rng):
        r"""Avron et al. (2017): sample frequencies proportionally to the ridge leverage
        function :math:`\tau_\lambda(\omega) = p(\omega)\, z_\omega^*(\mathbf K + n\lambda I)^{-1}
        z_\omega`, estimated on a pool of M frequencies drawn from p."""
        n_pool = self.pool_factor * n_freq
        pool = measure.sample(n_pool, X.shape[1], method="mc", random_state=rng)
        # Scores on at most 2000 training rows keep the fit cheap; Z Zᵀ ≈ K on those rows.
        rows = X if len(X) <= 2000 else X[rng.choice(len(X), 2000, replace=False)]
        rows = rows.astype(np.float64)
        n = len(rows)
        P = rows @ pool.T
        Z = np.hstack([np.cos(P), np.sin(P)]) / math.sqrt(n_pool)
        # τ_j = [Zᵀ(ZZᵀ + nλI)⁻¹Z]_jj, summed over the cos and sin column of frequency j.
        G = Z.T @ Z
        G[np.diag_indices_from(G)] += n * self.ridge
        A = np.linalg.solve(G, Z.T @ Z)
        tau = np.diag(A)[:n_pool] + np.diag(A)[n_pool:]
        tau = np.clip(tau, 0, None) + 1e-12
        q = tau / tau.sum()
        idx = rng.choice(n_pool, size=n_freq, replace=True, p=q)
        # Unbiased: E_j[z_j z_jᵀ / (M q_j)] = (1/M) Σ_j z_j z_jᵀ ≈ K.
        return pool[idx], np.sqrt(1.0 / (n_pool * q[idx]))

    def transform(self, X):
        """ψ(X): the random features of the rows of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Psi : ndarray of shape (n_samples, n_components)
            In the compute dtype (complex for ``map="complex"``).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        dtype = self._compute_dtype(X)
        X = X.astype(dtype, copy=False)
        D = self.n_components
        W = self.omega_.T.astype(dtype)
        if self.map == "complex":
            scale = math.sqrt(self._mass / D) * self.weights_
            re = fourier_features(
                X, W, self.offset_, scale, exact=self.exact_cos, n_threads=self.n_threads
            )
            im = fourier_features(
                X,
                W,
                self.offset_ + math.pi / 2,
                scale,
                exact=self.exact_cos,
                n_threads=self.n_threads,
            )
            # exp(−it) = cos t − i sin t and cos(t + π/2) = −sin t.
            ctype = np.complex64 if dtype == np.float32 else np.complex128
            out = np.empty(re.shape, dtype=ctype)
            out.real, out.imag = re, im
            return out
        scale = math.sqrt(2.0 * self._mass / D) * self.weights_
        return fourier_features(
            X, W, self.offset_, scale, exact=self.exact_cos, n_threads=self.n_threads
        )

    def approximate_kernel(self, X, Y=None):
        r""":math:`\psi(X)\psi(Y)^T` (real part for the complex map), the estimate of K."""
        A = self.transform(X)
        B = A if Y is None else self.transform(Y)
        return np.real(A @ np.conj(B).T)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # complex output for map="complex"; otherwise float32 in, float32 out (dtype=None).
        complex_out = self.map == "complex"
        tags.transformer_tags.preserves_dtype = [] if complex_out else ["float64", "float32"]
        return tags
