r"""Spectral measures of shift-invariant kernels (Bochner's theorem; Rudin, 1962).

A continuous shift-invariant kernel :math:`K(x, y) = k(x - y)` is positive definite exactly when
:math:`k` is the Fourier transform of a finite non-negative measure :math:`\mu`,

.. math:: k(z) = \int_{\mathbb R^d} e^{-i\omega^T z}\, d\mu(\omega)
                = \mu(\mathbb R^d)\; \mathbf E_{\omega \sim p}[\cos(\omega^T z)],

with :math:`p = \mu / \mu(\mathbb R^d)` a probability density and total mass
:math:`\mu(\mathbb R^d) = k(0)`. Sampling :math:`\omega \sim p` is the first step of every
random Fourier feature map (Rahimi and Recht, 2007;
:doc:`chapter 5 </book/05_bochner_random_fourier_features>`). This module gives, for each kernel of
:mod:`kernelcourse.kernels` with a closed-form transform,

==============================================  ==========================================
kernel                                          spectral density p(ω)
==============================================  ==========================================
``RBF(γ)``: exp(−γ‖x−y‖²)                         N(0, 2γ I)
``Laplacian(γ)``: exp(−γ‖x−y‖₁)                   product of d Cauchy(0, γ)
``Matern(ν, ℓ)``                                multivariate Student t, 2ν degrees of
                                                freedom, scale matrix I/ℓ²
==============================================  ==========================================

and three ways to draw D frequencies: ``"mc"`` (i.i.d.), ``"qmc"`` (scrambled Halton or Sobol
points pushed through the inverse CDF; Avron et al. 2016) and ``"orthogonal"`` (orthogonal
random features, Yu et al. 2016: directions from random orthogonal matrices, norms from the
radial law of p; isotropic measures only).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats
from scipy.stats import qmc
from sklearn.utils import check_random_state

from ._validation import _not_ragged, check_memory, check_positive
from .kernels import RBF, Kernel, Laplacian, Matern, Scaled, resolve_kernel

__all__ = [
    "SpectralMeasure",
    "GaussianMeasure",
    "CauchyProductMeasure",
    "StudentTMeasure",
    "spectral_measure",
    "SAMPLING_METHODS",
]

SAMPLING_METHODS = ("mc", "qmc", "orthogonal")
QMC_ENGINES = ("halton", "sobol")

# Inverse CDFs are infinite at 0 and 1; scrambled points can land arbitrarily close to both.
_U_EPS = 1e-12


def _check_size(n, name):
    if isinstance(n, np.ndarray) and n.ndim == 0 and n.dtype.kind in "iu":
        n = n.item()  # a 0-d integer array counts as its number
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {n!r}.")
    return int(n)


def _as_omega(omega, d=None, name="omega"):
    """``omega`` as a finite real (m, d) float64 array; the errors name ``name``."""
    _not_ragged(omega, name)
    arr = np.asarray(omega)
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued, got complex dtype {arr.dtype}.")
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim == 1:
        arr = arr[:, None] if d in (None, 1) else arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be an array of shape (m, d), got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(
            f"{name} is empty (shape {arr.shape}); it needs at least one row and column."
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; p and k are defined on R^d.")
    return arr


def _log_row_norms(omega):
    """log ‖ω_i‖ for the rows of ``omega`` (−inf for a zero row), each row divided by its
    largest entry before squaring: ω of 1e154 and beyond have squares beyond the float range."""
    top = np.abs(omega).max(axis=1)
    unit = omega / np.where(top > 0, top, 1.0)[:, None]
    with np.errstate(divide="ignore"):
        return np.log(top) + 0.5 * np.log(np.einsum("ij,ij->i", unit, unit))


def _finite_moment(value, what):
    """``value`` (a second moment that exists) if it is finite, else a ValueError."""
    if not math.isfinite(value):
        raise ValueError(
            f"the second moment E[ω^T ω] overflows floating point: {what} is too large in "
            "magnitude."
        )
    return value


class SpectralMeasure:
    r"""The spectral measure μ of a shift-invariant kernel: density, sampler and moments.

    ``mass`` is :math:`\mu(\mathbb R^d) = k(0)`; :meth:`pdf` and :meth:`sample` refer to the
    normalized probability density :math:`p = \mu / \text{mass}`.
    """

    #: Whether p(ω) depends on ‖ω‖ only (needed by orthogonal sampling).
    isotropic = True

    def __init__(self, kernel, mass=1.0):
        self.kernel = kernel
        self.mass = check_positive(mass, "mass")

    # -- to be provided by subclasses ------------------------------------------------------------
    def logpdf(self, omega):
        """log p(ω) for the rows of ``omega`` (shape (m, d))."""
        raise NotImplementedError

    def _mc(self, n, d, rng):
        raise NotImplementedError

    def _from_uniform(self, U, d):
        """Push uniforms ``U`` of shape (n, :meth:`qmc_dim`) through the inverse CDF."""
        raise NotImplementedError

    def qmc_dim(self, d):
        """Number of uniform coordinates one sample needs (d, or d + 1 for Student t)."""
        return _check_size(d, "d")  # d = inf or None came back as it was

    def second_moment(self, d):
        r""":math:`\sigma_p^2 = \mathbf E_p[\omega^T\omega]` (``inf`` when it does not exist;
        a ValueError when it exists but overflows floating point)."""
        raise NotImplementedError

    # -- public API --------------------------------------------------------------------------------
    def pdf(self, omega):
        """Probability density p(ω) at the rows of ``omega``: ``inf`` where it exceeds the
        float range (near ω = 0 for γ below about 1e-300; :meth:`logpdf` stays finite)."""
        with np.errstate(over="ignore"):  # the correctly rounded value, not numerical trouble
            return np.exp(self.logpdf(_as_omega(omega)))

    def characteristic(self, Z):
        r""":math:`\mathbf E_p[\cos(\omega^T z)] = k(z) / k(0)` at the rows of ``Z`` (shape
        (m, d), non-empty), from the kernel's closed form (what sample averages of
        :math:`\cos(\omega^T z)` estimate)."""
        Z = _as_omega(Z, name="Z")
        return self.kernel(Z, np.zeros((1, Z.shape[1])))[:, 0] / self.mass

    def sample(self, n, d, *, method="mc", random_state=None, qmc_engine="halton"):
        r"""Draw ``n`` frequencies :math:`\omega \in \mathbb R^d` from p.

        Parameters
        ----------
        n : int >= 1
            Number of frequencies (the D of the book).
        d : int >= 1
            Input dimension.
        method : {"mc", "qmc", "orthogonal"}
            ``"mc"`` i.i.d.; ``"qmc"`` a scrambled low-discrepancy sequence through the inverse
            CDF; ``"orthogonal"`` blocks of d exactly orthogonal directions with norms drawn
            from the radial law of p (isotropic measures only).
        random_state : int, RandomState instance or None
        qmc_engine : {"halton", "sobol"}
            Low-discrepancy sequence for ``method="qmc"``.

        Returns
        -------
        omega : ndarray of shape (n, d)

        Raises
        ------
        ValueError
            If an argument is out of range (the error names it; with ``qmc_engine="sobol"``,
            d beyond the 21201 dimensions of scipy's Sobol sequences), or if the frequencies
            overflow floating point (a kernel scale near the float range).
        MemoryError
            If n · d frequencies (or, for ``"orthogonal"``, the d × d blocks) do not fit in
            the machine's memory.
        """
        n, d = _check_size(n, "n"), _check_size(d, "d")
        check_memory(8 * n * d, f"sampling n={n} frequencies in d={d} dimensions", "lower n")
        try:
            rng = check_random_state(random_state)
        except ValueError as err:
            raise ValueError(f"random_state: {err}") from None
        with np.errstate(over="ignore", invalid="ignore"):
            if method == "mc":
                omega = self._mc(n, d, rng)
            elif method == "qmc":
                dim = self.qmc_dim(d)
                if qmc_engine == "sobol" and dim > qmc.Sobol.MAXDIM:
                    raise ValueError(
                        f"d={d} needs {dim} coordinates per point, but scipy's Sobol sequences "
                        f"have at most {qmc.Sobol.MAXDIM}; use qmc_engine='halton' or "
                        "method='mc'."
                    )
                U = _qmc_uniforms(n, dim, rng, qmc_engine)
                omega = self._from_uniform(U, d)
            elif method == "orthogonal":
                if not self.isotropic:
                    raise ValueError(
                        "orthogonal sampling needs a rotation-invariant spectral measure; the one "
                        f"of {self.kernel!r} is a product of Cauchy laws, which is not. Use 'mc' "
                        "or 'qmc'."
                    )
                # ⌈n/d⌉ blocks of d × d, held three times (G, Q, R): numpy's "Unable to
                # allocate 74.5 GiB for an array with shape (1, 100000, 100000)" named
                # neither d nor the method
                check_memory(
                    3 * 8 * -(-n // d) * d * d,
                    f"orthogonal sampling in d={d} dimensions (blocks of d × d orthogonal "
                    "matrices)",
                    "use method='mc' or 'qmc'",
                )
                omega = self._orthogonal(n, d, rng)
            else:
                raise ValueError(f"method must be one of {SAMPLING_METHODS}, got {method!r}.")
        if not np.isfinite(omega).all():
            raise ValueError(
                f"frequencies drawn for {self.kernel!r} overflow floating point: its scale "
                "(gamma or 1/length_scale) is too large in magnitude."
            )
        return omega

    def _orthogonal(self, n, d, rng):
        # Yu et al. (2016): rows of a Haar-random orthogonal matrix, rescaled by norms that
        # have the law of ‖ω‖ under p, so every row is still marginally distributed as p.
        G = rng.normal(size=(-(-n // d), d, d))
        Q, R = np.linalg.qr(G)  # batched over the blocks
        Q *= np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]  # makes each Q Haar
        directions = np.swapaxes(Q, 1, 2).reshape(-1, d)[:n]
        norms = np.linalg.norm(self._mc(n, d, rng), axis=1)
        return directions * norms[:, None]

    def __repr__(self):
        return f"{type(self).__name__}(kernel={self.kernel!r}, mass={self.mass!r})"


def _halton_permutation_bytes(dim):
    """Memory scipy's scrambled Halton sequence takes for its digit permutations: for the
    prime p of each of the ``dim`` coordinates, ceil(54 / log2 p) - 1 permutations of p
    int64s. It grows like dim² log dim: 2.5 GB at dim = 4000, over 100 GB at 25 000."""
    if dim < 1:
        return 0
    bound = max(15, int(dim * (math.log(dim) + math.log(math.log(dim + 2))) + 10))
    sieve = np.ones(bound + 1, dtype=bool)
    sieve[:2] = False
    for q in range(2, math.isqrt(bound) + 1):
        if sieve[q]:
            sieve[q * q :: q] = False
    primes = np.flatnonzero(sieve)[:dim].astype(np.float64)
    counts = np.ceil(54 / np.log2(primes)) - 1
    return int(8 * float(np.sum(counts * primes)))


def _qmc_uniforms(n, dim, rng, engine):
    seed = int(rng.randint(0, 2**31 - 1))
    if engine == "halton":
        # d = 25 000 ran for hours, swapping, before this check
        check_memory(
            _halton_permutation_bytes(dim),
            f"scrambled Halton points in {dim} dimensions (scipy's digit permutations)",
            "use qmc_engine='sobol' (up to 21201 dimensions) or method='mc'",
        )
        U = qmc.Halton(dim, scramble=True, seed=seed).random(n)
    elif engine == "sobol":
        # A prefix of a power-of-two Sobol block keeps the balance properties as far as possible.
        m = max(0, math.ceil(math.log2(n)))
        U = qmc.Sobol(dim, scramble=True, seed=seed).random_base2(m)[:n]
    else:
        raise ValueError(f"qmc_engine must be one of {QMC_ENGINES}, got {engine!r}.")
    return np.clip(U, _U_EPS, 1 - _U_EPS)


class GaussianMeasure(SpectralMeasure):
    r"""N(0, 2γ I), the spectral density of :math:`\exp(-\gamma\|x - y\|^2)` (chapter 5).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.spectral import GaussianMeasure
    >>> p = GaussianMeasure(gamma=2.0)
    >>> Omega = p.sample(50_000, 1, random_state=0)
    >>> estimate = np.cos(0.3 * Omega).mean()  # E[cos(ω δ)] = K(δ) by Bochner
    >>> print(round(float(estimate), 2), round(float(np.exp(-2.0 * 0.3**2)), 2))
    0.84 0.84
    """

    def __init__(self, gamma, kernel=None, mass=1.0):
        super().__init__(RBF(gamma) if kernel is None else kernel, mass)
        self.gamma = check_positive(gamma, "gamma")
        self.sigma = math.sqrt(2.0 * self.gamma)

    def logpdf(self, omega):
        omega = _as_omega(omega)
        d = omega.shape[1]
        # scaled first: ‖ω‖² overflows from 1.3e154, ‖ω‖²/σ² later; where it does, log p is
        # below −1e308 and −inf its correct rounding (numpy's overflow warnings say nothing)
        with np.errstate(over="ignore"):
            z = omega / self.sigma
            sq = np.einsum("ij,ij->i", z, z)
        return -sq / 2 - d * math.log(self.sigma * math.sqrt(2 * math.pi))

    def _mc(self, n, d, rng):
        # Drawn as a (d, n) block and transposed: the same stream as scikit-learn's RBFSampler.
        return self.sigma * rng.normal(size=(d, n)).T

    def _from_uniform(self, U, d):
        return self.sigma * stats.norm.ppf(U)

    def second_moment(self, d):
        return _finite_moment(_check_size(d, "d") * self.sigma**2, f"gamma={self.gamma!r}")


class CauchyProductMeasure(SpectralMeasure):
    r"""Product of d Cauchy(0, γ) laws, the spectral density of :math:`\exp(-\gamma\|x-y\|_1)`.

    In one dimension :math:`\int e^{-i\omega z}\, \frac{\gamma}{\pi(\gamma^2 + \omega^2)}\,
    d\omega = e^{-\gamma |z|}`; the ℓ₁ kernel factorizes over coordinates, so p does too.

    Examples
    --------
    >>> from kernelcourse.spectral import CauchyProductMeasure
    >>> Omega = CauchyProductMeasure(gamma=1.0).sample(8, 3, random_state=0)
    >>> print(Omega.shape)
    (8, 3)
    """

    isotropic = False

    def __init__(self, gamma, kernel=None, mass=1.0):
        super().__init__(Laplacian(gamma) if kernel is None else kernel, mass)
        self.gamma = check_positive(gamma, "gamma")

    def logpdf(self, omega):
        omega = _as_omega(omega)
        g = self.gamma
        # log(γ² + ω²) = 2 log a + log1p((b/a)²), a = max(γ, |ω|), b = min(γ, |ω|): no square
        # of γ or ω, which overflow from 1.3e154
        a = np.maximum(g, np.abs(omega))
        b = np.minimum(g, np.abs(omega))
        log_sum_sq = 2 * np.log(a) + np.log1p((b / a) ** 2)
        return np.sum(math.log(g / math.pi) - log_sum_sq, axis=1)

    def _mc(self, n, d, rng):
        return self.gamma * rng.standard_cauchy(size=(n, d))

    def _from_uniform(self, U, d):
        return self.gamma * np.tan(np.pi * (U - 0.5))

    def second_moment(self, d):
        _check_size(d, "d")
        return math.inf


class StudentTMeasure(SpectralMeasure):
    r"""Multivariate Student t with 2ν degrees of freedom and scale matrix I/ℓ².

    Its density is proportional to :math:`(2\nu/\ell^2 + \|\omega\|^2)^{-(\nu + d/2)}`, the
    Fourier transform of the Matérn kernel with smoothness ν and length-scale ℓ. A sample is
    :math:`\omega = g\,\sqrt{2\nu / u}\,/\ell` with :math:`g \sim N(0, I_d)` and
    :math:`u \sim \chi^2_{2\nu}` independent; ν = 1/2 gives the multivariate Cauchy law of
    :math:`e^{-\|x - y\|/\ell}`.

    Examples
    --------
    >>> from kernelcourse.spectral import StudentTMeasure
    >>> p = StudentTMeasure(nu=1.5, length_scale=1.0)
    >>> Omega = p.sample(8, 3, method="qmc", random_state=0)
    >>> print(Omega.shape)
    (8, 3)
    """

    def __init__(self, nu, length_scale, kernel=None, mass=1.0):
        super().__init__(Matern(nu, length_scale) if kernel is None else kernel, mass)
        # checked here too: with a kernel given, ν = 0 or −1 failed inside numpy ("df <= 0")
        # and ν = inf gave a NaN density
        self.nu = check_positive(nu, "nu")
        self.length_scale = check_positive(length_scale, "length_scale")
        self.df = 2.0 * self.nu

    def logpdf(self, omega):
        omega = _as_omega(omega)
        d = omega.shape[1]
        df, ell = self.df, self.length_scale
        # log(1 + ℓ²‖ω‖²/df) = logaddexp(0, 2 log t), t = ℓ‖ω‖/√df from logs: neither ‖ω‖²
        # nor ℓ² is formed (each overflows from 1.3e154)
        log_t = math.log(ell) - 0.5 * math.log(df) + _log_row_norms(omega)
        log_norm = (
            special.gammaln((df + d) / 2)
            - special.gammaln(df / 2)
            - (d / 2) * math.log(df * math.pi)
            + d * math.log(ell)
        )
        return log_norm - (df + d) / 2 * np.logaddexp(0.0, 2 * log_t)

    def _mc(self, n, d, rng):
        g = rng.normal(size=(n, d))
        u = rng.chisquare(self.df, size=n)
        return g * (np.sqrt(self.df / u) / self.length_scale)[:, None]

    def qmc_dim(self, d):
        return _check_size(d, "d") + 1

    def _from_uniform(self, U, d):
        g = stats.norm.ppf(U[:, :d])
        u = stats.chi2.ppf(U[:, d], self.df)
        return g * (np.sqrt(self.df / u) / self.length_scale)[:, None]

    def second_moment(self, d):
        d = _check_size(d, "d")
        if self.df <= 2:
            return math.inf
        ell = self.length_scale  # divided twice: ℓ² overflows from 1.3e154
        moment = d * self.df / (self.df - 2) / ell / ell
        return _finite_moment(moment, f"1/length_scale (length_scale={ell!r})")


def spectral_measure(kernel, **kernel_params):
    """The spectral measure of a shift-invariant kernel (Bochner's theorem,
    :doc:`chapter 5 </book/05_bochner_random_fourier_features>`).

    Parameters
    ----------
    kernel : Kernel or str
        ``RBF``, ``Laplacian``, ``Matern`` or a non-negative multiple ``c * k`` of one of them
        (the measure then has mass c); a name is resolved with
        :func:`kernelcourse.kernels.resolve_kernel` and ``kernel_params``.
    **kernel_params
        Parameters of a named kernel (``gamma``, ``nu``, ``length_scale``); refused with a
        kernel object, which holds its own.

    Returns
    -------
    SpectralMeasure

    Raises
    ------
    ValueError
        For kernels that are not shift invariant or whose transform is not implemented here.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.spectral import spectral_measure
    >>> p = spectral_measure(RBF(gamma=0.5))
    >>> Omega = p.sample(100_000, 2, random_state=0)
    >>> print(type(p).__name__, Omega.shape, np.round(Omega.std(axis=0), 1))
    GaussianMeasure (100000, 2) [1. 1.]
    """
    if isinstance(kernel, str):
        kernel = resolve_kernel(kernel, **kernel_params)
    elif kernel_params:
        # spectral_measure(RBF(), gamma=2.0) returned the measure of RBF(gamma=1.0), silently
        raise ValueError(
            f"kernel_params {sorted(kernel_params)} apply to a kernel name only; the kernel "
            f"object {kernel!r} holds its own parameters (build it with the ones you want)."
        )
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a kernelcourse Kernel or a name, got {kernel!r}.")
    if isinstance(kernel, Scaled):
        if kernel.c == 0:
            raise ValueError("the kernel 0 * k has the zero measure; there is nothing to sample.")
        inner = spectral_measure(kernel.k1)
        inner.kernel = kernel
        inner.mass *= kernel.c
        return inner
    if isinstance(kernel, RBF):
        if np.ndim(kernel.gamma) != 0:
            raise ValueError(
                "random Fourier features take one gamma; for one gamma per feature, scale "
                "feature k of X by sqrt(gamma_k) and use gamma=1."
            )
        return GaussianMeasure(kernel.gamma, kernel=kernel)
    if isinstance(kernel, Laplacian):
        return CauchyProductMeasure(kernel.gamma, kernel=kernel)
    if isinstance(kernel, Matern):
        return StudentTMeasure(kernel.nu, kernel.length_scale, kernel=kernel)
    reason = (
        "it is not shift invariant, so Bochner's theorem does not apply"
        if not kernel.shift_invariant
        else "its Fourier transform is not implemented here"
    )
    raise ValueError(
        f"no spectral measure for {kernel!r}: {reason}. Supported: RBF, Laplacian, Matern and "
        "positive multiples of them."
    )
