r"""The reproducing kernel Hilbert space of a kernel, built in four steps (Aronszajn, 1950).

1. Every point :math:`x` becomes a function, the kernel section :math:`K_x = K(x, \cdot)`
   (:func:`kernel_section`).
2. Finite sums :math:`f = \sum_i \alpha_i K_{x_i}` span the pre-Hilbert space
   :math:`\mathcal H_0` (:class:`RKHSFunction`, with ``+`` and scalar ``*``).
3. The inner product :math:`\langle K_x, K_{x'} \rangle_{\mathcal H} = K(x, x')`, extended
   bilinearly, gives :math:`\langle f, g \rangle_{\mathcal H} = \alpha^T \mathbf K(x, x') \beta`
   (:func:`inner`, :func:`norm`).
4. Completing :math:`\mathcal H_0` in :math:`\|\cdot\|_{\mathcal H}` gives the RKHS; in code a
   limit is seen through Cauchy sequences of elements of :math:`\mathcal H_0`.

The reproducing property :math:`\langle f, K_x \rangle_{\mathcal H} = f(x)` then holds by
construction and can be checked numerically: ``inner(f, kernel_section(k, x)) == f(x)``.

Mercer's theorem (Mercer, 1909; :doc:`chapter 2 </book/02_building_an_rkhs>`) expands the kernel in
the eigenfunctions of the integral operator :math:`(Tf)(x) = \int K(x, u) f(u)\, d\mu(u)`:
:math:`K(x, x') = \sum_i \lambda_i \psi_i(x) \psi_i(x')`. :func:`mercer_expansion` estimates
:math:`(\lambda_i, \psi_i)` by the Nyström method on a sample or quadrature of :math:`\mu` (Williams
and Seeger, 2001), and :func:`gaussian_mercer_closed_form` gives the exact answer for the Gaussian
kernel under a Gaussian measure (Rasmussen and Williams, 2006, §4.3.1) to compare with.
"""

from __future__ import annotations

import itertools
import math
import numbers

import numpy as np
from scipy import linalg

from ._validation import (
    _not_ragged,
    as_float_matrix,
    as_float_vector,
    check_count,
    check_memory,
    check_positive,
    find_stack_level,
    naming,
)
from .kernels import RBF, Kernel

__all__ = [
    "RKHSFunction",
    "kernel_section",
    "inner",
    "norm",
    "MercerExpansion",
    "mercer_expansion",
    "GaussianMercer",
    "gaussian_mercer_closed_form",
]


def _finite(value, what):
    """``value``, or a ValueError naming ``what`` if it overflowed to infinity or NaN."""
    if not np.all(np.isfinite(value)):
        raise ValueError(
            f"the {what} overflows floating point: its true value is beyond the float range. "
            "Scale the coefficients down (f / c) and the result up by c in your own units."
        )
    return value


def _check_kernel(kernel):
    if not isinstance(kernel, Kernel):
        raise TypeError(
            f"kernel must be a kernelcourse.kernels.Kernel (e.g. RBF(gamma=1.0)), "
            f"got {type(kernel).__name__}."
        )
    return kernel


def _real_scalar(c):
    """``c`` as a float if it is a real number (not a bool), a 0-d numeric array as its
    scalar, else None. An integer beyond the float range is a ValueError (numpy's TypeError
    from ``isfinite`` and Python's OverflowError before)."""
    if isinstance(c, np.ndarray) and c.ndim == 0:
        c = c[()]
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Real):
        return None
    try:
        c = float(c)
    except OverflowError:
        raise ValueError(
            "scalar must be a finite number, got an integer beyond the float range (about 1.8e308)."
        ) from None
    if not math.isfinite(c):
        raise ValueError(f"scalar must be finite, got {c!r}.")
    return c


class RKHSFunction:
    r"""An element :math:`f = \sum_{i=1}^n \alpha_i K(x_i, \cdot)` of :math:`\mathcal H_0`.

    Step 2 of the construction in :doc:`chapter 2 </book/02_building_an_rkhs>`: the span of the
    kernel sections. Calling ``f(X)`` evaluates :math:`f(x) = \sum_i \alpha_i K(x_i, x)` at every
    row of ``X``; ``f + g``, ``f - g``, ``c * f`` and ``-f`` stay in the span; :meth:`inner` and
    :meth:`norm` use the RKHS inner product
    :math:`\langle f, g \rangle_{\mathcal H} = \alpha^T \mathbf K(x, x') \beta`.

    Parameters
    ----------
    kernel : Kernel
        The reproducing kernel K.
    centers : array of shape (n, d)
        The points :math:`x_1, \dots, x_n`.
    coef : array of shape (n,) or (n, k)
        The coefficients α. Two dimensions hold k functions with shared centers (one per
        column), as a multi-output kernel ridge regression produces.

    Attributes
    ----------
    kernel, centers, coef
        As given (``centers`` and ``coef`` as float arrays).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.rkhs import RKHSFunction
    >>> f = RKHSFunction(RBF(gamma=1.0), centers=[[0.0], [1.0]], coef=[1.0, -1.0])
    >>> print(np.round(f(np.array([[0.0], [0.5]])), 4))
    [0.6321 0.    ]
    >>> print(round(f.norm(), 4))
    1.1244
    """

    # numpy arrays and scalars leave every operator to f (c * f calls our __rmul__): else
    # np.array(2.0) * f raised TypeError and f * np.array(2.0) was a 0-d object array
    __array_ufunc__ = None

    def __init__(self, kernel, centers, coef):
        self.kernel = _check_kernel(kernel)
        centers = as_float_matrix(centers, "centers")
        coef = np.asarray(coef)
        if coef.dtype == object or not np.issubdtype(coef.dtype, np.number):
            raise TypeError(f"coef must be a numeric array, got dtype {coef.dtype}.")
        if np.iscomplexobj(coef):
            raise TypeError("coef must be real-valued.")
        coef = coef.astype(np.result_type(coef.dtype, centers.dtype, np.float32), copy=False)
        if coef.ndim not in (1, 2):
            raise ValueError(f"coef must be 1-D or 2-D, got shape {coef.shape}.")
        if coef.shape[0] != centers.shape[0]:
            raise ValueError(
                f"centers has {centers.shape[0]} rows but coef has {coef.shape[0]} entries; "
                "there must be one coefficient (row) per center."
            )
        if not np.isfinite(coef).all():
            raise ValueError("coef contains NaN or infinity.")
        self.centers = centers
        self.coef = coef

    # -- evaluation -----------------------------------------------------------------------
    @property
    def n_centers(self):
        """Number n of kernel sections in the sum."""
        return self.centers.shape[0]

    @property
    def n_features(self):
        """Dimension d of the input space."""
        return self.centers.shape[1]

    def __call__(self, X):
        r"""Evaluate :math:`f(x) = \sum_i \alpha_i K(x_i, x)` at every row of ``X``.

        Returns an array of shape (m,) for 1-D ``coef``, (m, k) for 2-D.

        Raises
        ------
        ValueError
            If a value overflows floating point (coefficients near the float range).
        """
        X = as_float_matrix(X, "X")
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} features but the centers of f have {self.n_features}."
            )
        with np.errstate(over="ignore", invalid="ignore"):
            return _finite(self.kernel(X, self.centers) @ self.coef, "value of f")

    # -- vector-space operations (H0 is a linear space) --------------------------------------
    def _check_compatible(self, other):
        if not isinstance(other, RKHSFunction):
            return False
        if other.kernel != self.kernel:
            raise ValueError(
                f"cannot combine functions of different RKHSs: {self.kernel!r} and "
                f"{other.kernel!r}."
            )
        if other.n_features != self.n_features or other.coef.shape[1:] != self.coef.shape[1:]:
            raise ValueError(
                "cannot combine functions with different input dimensions or output counts: "
                f"centers {self.centers.shape} / coef {self.coef.shape} and centers "
                f"{other.centers.shape} / coef {other.coef.shape}."
            )
        return True

    def __add__(self, other):
        if not self._check_compatible(other):
            return NotImplemented
        # On the same centers the coefficients add: f - f is then exactly 0, where the
        # quadratic form over both sets cancelled to a norm of ~1e-8.
        if self.centers is other.centers or np.array_equal(self.centers, other.centers):
            with np.errstate(over="ignore"):
                coef = self.coef + other.coef
            if np.isfinite(coef).all():  # else 1e308 + 1e308: keep both sets of centers
                return RKHSFunction(self.kernel, self.centers, coef)
        # The sum of two finite expansions is the expansion over both sets of centers.
        return RKHSFunction(
            self.kernel,
            np.vstack([self.centers, other.centers]),
            np.concatenate([self.coef, other.coef]),
        )

    def __sub__(self, other):
        if not self._check_compatible(other):
            return NotImplemented
        return self + (-1.0) * other

    def __neg__(self):
        return (-1.0) * self

    def __mul__(self, c):
        c = _real_scalar(c)
        if c is None:
            return NotImplemented
        return self._scaled(c, "*")

    __rmul__ = __mul__

    def __truediv__(self, c):
        c = _real_scalar(c)
        if c is None:
            return NotImplemented
        if c == 0:
            raise ZeroDivisionError("cannot divide an RKHS function by 0.")
        # α / c, not α · (1/c): 1/c overflows for c below 1e-308 (f / 1e-310 was refused as
        # "scalar must be finite, got inf" even where α / c is representable)
        return self._scaled(c, "/")

    def _scaled(self, c, op):
        """The function with coefficients α·c or α/c, or a ValueError where those overflow
        (numpy's bare overflow warning before)."""
        with np.errstate(over="ignore", under="ignore"):
            coef = self.coef * c if op == "*" else self.coef / c
        if not np.isfinite(coef).all():
            raise ValueError(
                f"f {op} {c:.3g} overflows floating point: the coefficients of f reach "
                f"{float(np.abs(self.coef).max()):.3g} ({self.coef.dtype}); scale by a "
                "smaller factor."
            )
        return RKHSFunction(self.kernel, self.centers, coef)

    # -- Hilbert-space structure -----------------------------------------------------------
    def inner(self, other):
        r""":math:`\langle f, g \rangle_{\mathcal H} = \alpha^T \mathbf K(x, x') \beta` (Aronszajn,
        1950). A float for 1-D coefficients, a (k_f, k_g) matrix otherwise."""
        return inner(self, other)

    def norm(self):
        r""":math:`\|f\|_{\mathcal H} = \sqrt{\alpha^T \mathbf K \alpha}`; one per output for 2-D
        ``coef``."""
        return norm(self)

    def __repr__(self):
        return (
            f"RKHSFunction(kernel={self.kernel!r}, n_centers={self.n_centers}, "
            f"n_features={self.n_features})"
        )


def kernel_section(kernel, x):
    r"""The kernel section :math:`K_x = K(x, \cdot)` as an :class:`RKHSFunction` (step 1 of
    :doc:`chapter 2 </book/02_building_an_rkhs>`: the feature map :math:`x \mapsto K_x`).

    Parameters
    ----------
    kernel : Kernel
    x : array of shape (d,) or (1, d)
        One point of the input space.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.rkhs import RKHSFunction, inner, kernel_section
    >>> f = RKHSFunction(RBF(gamma=1.0), centers=[[0.0], [1.0]], coef=[2.0, 1.0])
    >>> kx = kernel_section(RBF(gamma=1.0), [0.5])
    >>> print(np.isclose(inner(f, kx), f(np.array([[0.5]]))[0]))  # the reproducing property
    True
    """
    _not_ragged(x, "x")  # (np.asarray's own error named nothing)
    x = np.asarray(x)
    # as_float_matrix's hint, x.reshape(-1, 1), is for data of many rows; a number or an
    # array of more dimensions gets a hint for one point (other dtypes are refused below)
    one_point = "x must be one point, of shape (d,) or (1, d), got"
    if x.dtype.kind in "biuf" and x.ndim == 0:
        raise ValueError(
            f"{one_point} the number {x.item()!r}; a point of a 1-D input space is a list "
            f"or array, [{x.item()!r}]."
        )
    if x.dtype.kind in "biuf" and x.ndim > 2:
        raise ValueError(
            f"{one_point} shape {x.shape}; pass one point, e.g. x.reshape(1, -1) or x.ravel()."
        )
    if x.ndim != 2:
        x = x.reshape(1, -1)
    x = as_float_matrix(x, "x")
    if x.shape[0] != 1:
        raise ValueError(f"x must be a single point of shape (d,) or (1, d), got {x.shape}.")
    return RKHSFunction(kernel, x, np.ones(1, dtype=x.dtype))


def inner(f, g):
    r"""RKHS inner product :math:`\langle f, g \rangle_{\mathcal H} = \sum_{ij} \alpha_i \beta_j
    K(x_i, x'_j) = \alpha^T \mathbf K(x, x') \beta` of two elements of :math:`\mathcal H_0`
    (Aronszajn, 1950; :doc:`chapter 2 </book/02_building_an_rkhs>`).

    Returns a float when both coefficient vectors are 1-D, else the matrix
    :math:`A^T \mathbf K B` of inner products between their columns. A value beyond the
    float range raises a ValueError.
    """
    for name, h in (("f", f), ("g", g)):
        if not isinstance(h, RKHSFunction):
            raise TypeError(f"{name} must be an RKHSFunction, got {type(h).__name__}.")
    if f.kernel != g.kernel:
        raise ValueError(f"f and g live in different RKHSs: kernels {f.kernel!r} and {g.kernel!r}.")
    if f.n_features != g.n_features:
        raise ValueError(
            f"f has {f.n_features}-dimensional centers but g has {g.n_features}-dimensional ones."
        )
    K = f.kernel(f.centers, g.centers)
    # coefficients of 1e-200 (or 1e200) would underflow (overflow) in the quadratic form:
    # it is bilinear, so take their scales out first
    (a, sa), (b, sb) = _unit_scaled(f.coef), _unit_scaled(g.coef)
    with np.errstate(over="ignore", invalid="ignore"):
        value = _finite((a.T @ K @ b) * np.multiply.outer(sa, sb), "inner product")
    return float(value) if np.ndim(value) == 0 else value


def _unit_scaled(coef):
    """coef / s and s = max |coef| (1 for zero coefficients), one s per column of a 2-D
    coef: a single scale for all columns underflowed the small ones (a column of ones next
    to one of 1e300 had norm 0)."""
    if coef.ndim == 2:
        s = np.abs(coef).max(axis=0) if coef.shape[0] else np.ones(coef.shape[1])
        s = np.where((s > 0) & np.isfinite(s), s, 1.0)
        return coef / s, s
    s = float(np.max(np.abs(coef))) if np.size(coef) else 0.0
    s = s if s > 0 and math.isfinite(s) else 1.0
    return coef / s, s


def norm(f):
    r"""RKHS norm :math:`\|f\|_{\mathcal H} = \sqrt{\alpha^T \mathbf K \alpha}` (Aronszajn,
    1950; :doc:`chapter 2 </book/02_building_an_rkhs>`).

    Round-off can make :math:`\alpha^T \mathbf K \alpha` a tiny negative number when f is
    (numerically) zero; that is clipped to 0. For 2-D ``coef``, one norm per column. A norm
    beyond the float range raises a ValueError.
    """
    if not isinstance(f, RKHSFunction):
        raise TypeError(f"f must be an RKHSFunction, got {type(f).__name__}.")
    K = f.kernel(f.centers)
    a, s = _unit_scaled(f.coef)  # ‖f‖ = s‖f/s‖: no underflow or overflow in αᵀKα
    if a.ndim == 1:
        return _finite(s * math.sqrt(max(float(a @ K @ a), 0.0)), "RKHS norm")
    sq = np.einsum("ik,ik->k", a, K @ a)
    with np.errstate(over="ignore"):
        return _finite(s * np.sqrt(np.clip(sq, 0.0, None)), "RKHS norm")


# -- Mercer expansion ------------------------------------------------------------------------------
class _EigenExpansion:
    """What every Mercer expansion offers once it has ``eigenvalues``, ``n_terms`` and
    ``eigenfunctions(X)``: the truncated Mercer sum."""

    def kernel_approximation(self, X, Y=None, n_terms=None):
        r"""The truncated Mercer sum :math:`\sum_{i \le M} \lambda_i \psi_i(x) \psi_i(y)`,
        the Mercer sum truncated at M = ``n_terms`` (all kept terms by default)."""
        if n_terms is None:
            M = self.n_terms
        else:
            M = check_count(n_terms, "n_terms")
        if not 1 <= M <= self.n_terms:
            raise ValueError(f"n_terms must be between 1 and {self.n_terms}, got {n_terms!r}.")
        PX = self.eigenfunctions(X)[:, :M]
        PY = PX if Y is None else naming("Y", self.eigenfunctions, Y)[:, :M]
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
            out = (PX * self.eigenvalues[:M]) @ PY.T
        if not np.isfinite(out).all():
            raise ValueError(
                "the truncated Mercer sum overflows floating point at these points: the "
                "kernel's values there are beyond the float range; rescale X (and Y)."
            )
        return out


class MercerExpansion(_EigenExpansion):
    r"""Eigenvalues and eigenfunctions of the integral operator of K on a measure μ.

    Produced by :func:`mercer_expansion`. The eigenfunctions are orthonormal in
    :math:`L^2(\mu)` (on the sample, exactly; elsewhere as far as the sample represents μ) and
    are evaluated anywhere with the Nyström extension formula

    .. math:: \psi_i(x) = \frac{1}{\lambda_i} \sum_{j=1}^n w_j K(x, u_j) \psi_i(u_j).

    Attributes
    ----------
    eigenvalues : array of shape (n_terms,)
        :math:`\lambda_1 \ge \lambda_2 \ge \dots`, the operator's eigenvalues.
    points : array of shape (n, d)
        The sample or quadrature nodes :math:`u_j`.
    weights : array of shape (n,)
        Their weights :math:`w_j` (summing to 1).
    kernel : Kernel
    """

    def __init__(self, kernel, points, weights, eigenvalues, eigvecs):
        self.kernel = kernel
        self.points = points
        self.weights = weights
        self.eigenvalues = eigenvalues
        # Columns u_i of the symmetrized matrix W^½ K W^½; ψ_i(u_j) = u_ij / √w_j.
        self._eigvecs = eigvecs
        self._sqrt_w = np.sqrt(weights)

    @property
    def n_terms(self):
        """Number of eigenpairs kept."""
        return len(self.eigenvalues)

    def eigenfunctions(self, X):
        r"""Evaluate :math:`\psi_1, \dots, \psi_M` at the rows of ``X``: shape (m, n_terms)."""
        X = as_float_matrix(X, "X", allow_float32=False)
        if X.shape[1] != self.points.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but the expansion lives in "
                f"{self.points.shape[1]} dimensions."
            )
        K = self.kernel(X, self.points)
        # ψ_i(x) = (1/λ_i) Σ_j √w_j K(x, u_j) u_ij  — the Nyström extension.
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
            out = (K * self._sqrt_w) @ self._eigvecs / self.eigenvalues
        if not np.isfinite(out).all():
            # 1/λ_i magnifies K(x, u_j): numpy's bare overflow warning and infinities before
            raise ValueError(
                f"the eigenfunctions overflow floating point at X (largest |entry| "
                f"{float(np.abs(X).max()):.3g}): K(x, u_j)/λ_i is beyond the float range "
                f"(smallest eigenvalue {float(self.eigenvalues[-1]):.3g}). Use points nearer "
                "the nodes or fewer n_terms."
            )
        return out

    __call__ = eigenfunctions

    def __repr__(self):
        return (
            f"MercerExpansion(kernel={self.kernel!r}, n_terms={self.n_terms}, "
            f"n_points={len(self.points)})"
        )


def mercer_expansion(
    kernel, points_or_sampler, n_terms, *, weights=None, n_samples=1000, random_state=None
):
    r"""Estimate the Mercer eigenpairs :math:`(\lambda_i, \psi_i)` of K on a measure μ by the
    Nyström method (Williams and Seeger, 2001; :doc:`chapter 2 </book/02_building_an_rkhs>`).

    The integral :math:`(T\psi)(x) = \int K(x, u) \psi(u)\,d\mu(u)` is replaced by the
    quadrature :math:`\sum_j w_j K(x, u_j) \psi(u_j)`. On the nodes this is the eigenproblem
    of :math:`\mathbf K \mathbf W`; with the symmetric matrix
    :math:`\mathbf W^{1/2} \mathbf K \mathbf W^{1/2} = U \Lambda U^T` the eigenvalues are
    :math:`\lambda_i = \Lambda_{ii}` and :math:`\psi_i(u_j) = U_{ji} / \sqrt{w_j}`, extended to
    any x by :math:`\psi_i(x) = \lambda_i^{-1} \sum_j w_j K(x, u_j) \psi_i(u_j)`.

    Parameters
    ----------
    kernel : Kernel
    points_or_sampler : array of shape (n, d) or callable
        Either the nodes :math:`u_j` (an i.i.d. sample of μ, or quadrature nodes together with
        ``weights``), or a sampler ``sampler(n, rng) -> array (n, d)`` drawing from μ.
    n_terms : int
        Number M of eigenpairs to return (at most the number of nodes).
    weights : array of shape (n,) or None
        Quadrature weights :math:`w_j > 0` (normalized to sum to 1); None means 1/n each, the
        Monte Carlo rule for an i.i.d. sample.
    n_samples : int
        Sample size drawn when a sampler is given.
    random_state : int, Generator or None
        Seed for the sampler.

    Returns
    -------
    MercerExpansion
        ``eigenvalues`` and the callable ``eigenfunctions(X)``.

    Warns
    -----
    RuntimeWarning
        If fewer than ``n_terms`` eigenvalues are numerically positive (those eigenfunctions
        cannot be extended; they are dropped).

    Raises
    ------
    ValueError
        If no eigenvalue is numerically positive (a zero Gram matrix on the nodes).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> from kernelcourse.rkhs import gaussian_mercer_closed_form, mercer_expansion
    >>> u = np.random.default_rng(0).normal(size=(2000, 1))
    >>> est = mercer_expansion(RBF(gamma=0.5), u, n_terms=3)
    >>> exact = gaussian_mercer_closed_form(gamma=0.5, sigma=1.0, n_terms=3)
    >>> print(np.round(est.eigenvalues, 2), np.round(exact.eigenvalues, 2))
    [0.62 0.24 0.09] [0.62 0.24 0.09]
    """
    kernel = _check_kernel(kernel)
    if callable(points_or_sampler) and not isinstance(points_or_sampler, np.ndarray):
        if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
            raise TypeError(f"n_samples must be an integer, got {n_samples!r}.")
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}.")
        try:
            rng = np.random.default_rng(random_state)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"random_state must be None, an integer or a numpy Generator, got {random_state!r}."
            ) from err
        # before the draw: n_samples=10**9 drew for minutes, then wanted an n × n Gram matrix
        _check_gram_memory(int(n_samples), "n_samples")
        points = points_or_sampler(int(n_samples), rng)
        points = np.asarray(points)
        if points.ndim == 1:
            points = points.reshape(-1, 1)
        if points.ndim and len(points) != n_samples:  # an estimate from another sample size
            raise ValueError(
                f"the sampler returned {len(points)} points for n_samples={int(n_samples)}; "
                "sampler(n, rng) must return an array of n rows."
            )
    else:
        points = points_or_sampler
    points = as_float_matrix(points, "points", allow_float32=False)
    n = len(points)
    _check_gram_memory(n, "the number of points")
    if isinstance(n_terms, bool) or not isinstance(n_terms, numbers.Integral):
        raise TypeError(f"n_terms must be an integer, got {n_terms!r}.")
    if not 1 <= n_terms <= n:
        raise ValueError(f"n_terms must be between 1 and the number of nodes {n}, got {n_terms}.")
    if weights is None:
        w = np.full(n, 1.0 / n)
    else:
        w = as_float_vector(weights, "weights", n)
        if (w <= 0).any():
            raise ValueError("weights must be finite and > 0.")
        w = w / w.max()  # first: a sum of weights of 1e308 overflows
        w = w / w.sum()
    sw = np.sqrt(w)
    A = kernel(points)
    A *= sw[:, None]
    A *= sw[None, :]
    vals, vecs = linalg.eigh(A, subset_by_index=[n - n_terms, n - 1], check_finite=False)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    # Eigenvalues at round-off level give no usable eigenfunction (the extension divides by λ).
    tol = max(float(vals[0]), 0.0) * n * np.finfo(np.float64).eps
    keep = vals > tol
    if not keep.any():
        raise ValueError(
            f"the kernel {kernel!r} has no eigenvalue above round-off on these points (its "
            f"Gram matrix is zero, largest eigenvalue {float(vals[0]):.3g}), so there is no "
            "Mercer expansion to estimate; check the kernel and the points."
        )
    if not keep.all():
        import warnings

        warnings.warn(
            f"only {int(keep.sum())} of the {n_terms} requested eigenvalues are above the "
            f"round-off level {tol:.3g} (smallest kept {vals[keep][-1]:.3g}); the rest are "
            "dropped.",
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )
        vals, vecs = vals[keep], vecs[:, keep]
    # Fix the sign of each eigenvector (largest-magnitude entry positive) so runs agree.
    idx = np.argmax(np.abs(vecs), axis=0)
    vecs = vecs * np.sign(vecs[idx, np.arange(vecs.shape[1])])
    return MercerExpansion(kernel, points, w, vals, vecs)


def _check_gram_memory(n, what):
    """The n × n Gram matrix and the eigensolver's copy of it must fit in memory."""
    check_memory(
        16 * n * n, f"mercer_expansion on {n} points (an {n} × {n} Gram matrix)", f"lower {what}"
    )


# -- closed form: Gaussian kernel under a Gaussian measure ---------------------------------------
class GaussianMercer(_EigenExpansion):
    r"""Exact Mercer eigenpairs of :math:`K(x, x') = \exp(-\gamma \|x - x'\|^2)` on
    :math:`\mu = \mathcal N(0, \sigma^2 I_d)` (Rasmussen and Williams, 2006, §4.3.1).

    With :math:`a = 1/(4\sigma^2)`, :math:`b = \gamma`, :math:`c = \sqrt{a^2 + 2ab}`,
    :math:`A = a + b + c` and :math:`B = b / A`, in one dimension

    .. math::
        \lambda_k = \sqrt{2a/A}\, B^k, \qquad
        \psi_k(x) = (c/a)^{1/4} e^{-(c - a) x^2} \frac{H_k(\sqrt{2c}\, x)}{\sqrt{2^k k!}},

    k = 0, 1, 2, …, with :math:`H_k` the physicists' Hermite polynomials; the factor in front
    makes :math:`\psi_k` orthonormal in :math:`L^2(\mu)`. In d dimensions the eigenpairs are
    products over coordinates, indexed by multi-indices :math:`(k_1, \dots, k_d)` with
    eigenvalue :math:`(2a/A)^{d/2} B^{k_1 + \dots + k_d}`.

    Attributes
    ----------
    eigenvalues : array of shape (n_terms,)
        In decreasing order.
    multi_indices : array of shape (n_terms, d)
        The Hermite degrees of each eigenfunction.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.rkhs import GaussianMercer
    >>> m = GaussianMercer(gamma=0.5, sigma=1.0, n_terms=20)
    >>> x = np.array([[0.3], [-0.4]])
    >>> print(np.round(m.eigenvalues[:3], 4))
    [0.618  0.2361 0.0902]
    >>> print(np.round(m.kernel_approximation(x), 4))
    [[1.     0.7827]
     [0.7827 1.    ]]
    """

    def __init__(self, gamma, sigma, n_terms, n_features=1):
        self.gamma = check_positive(gamma, "gamma")
        self.sigma = check_positive(sigma, "sigma")
        if isinstance(n_terms, bool) or not isinstance(n_terms, numbers.Integral) or n_terms < 1:
            raise ValueError(f"n_terms must be an integer >= 1, got {n_terms!r}.")
        if n_terms > MAX_CLOSED_FORM_TERMS:
            # the multi-indices are enumerated one by one and every evaluation builds an
            # (m, n_terms) table: 1e6 terms take seconds, 1e9 would take hours and 8 GB a row
            raise ValueError(
                f"n_terms={n_terms} is more than {MAX_CLOSED_FORM_TERMS} closed-form terms; "
                "beyond a few thousand the eigenvalues (2a/A)^{d/2} B^k are below round-off "
                "of the first one, so ask for fewer."
            )
        if (
            isinstance(n_features, bool)
            or not isinstance(n_features, numbers.Integral)
            or n_features < 1
        ):
            raise ValueError(f"n_features must be an integer >= 1, got {n_features!r}.")
        # each of the n_terms multi-indices is a tuple of d degrees, then a row of an int64
        # table: n_features = 2**62 was a MemoryError with an empty message
        check_memory(
            16 * (n_terms + 1) * n_features,
            f"GaussianMercer with n_terms={n_terms} multi-indices of n_features={n_features} "
            "degrees each",
            "lower n_features",
        )
        a = 0.25 / self.sigma / self.sigma  # σ² would underflow to 0 below 1e-154
        if not math.isfinite(a):
            raise ValueError(
                f"sigma = {self.sigma:g} is too small: the measure's 1/(4σ²) overflows."
            )
        if a == 0.0:
            raise ValueError(
                f"sigma = {self.sigma:g} is too large: the measure's 1/(4σ²) underflows to 0."
            )
        b = self.gamma
        if not math.isfinite(1.0 + 2.0 * b / a):
            # 2b/a = 8γσ² overflowed: B = (b/a)/(1 + b/a + √(1 + 2b/a)) was inf/inf, and the
            # eigenvalues NaN, silently
            raise ValueError(
                f"gamma = {b:g} and sigma = {self.sigma:g} are too far apart: 8γσ² is beyond "
                "the float range (the kernel is that much narrower than the measure); "
                "choose a smaller gamma or sigma."
            )
        # c = √(a² + 2ab) and c − a = 2b/(√(1 + 2b/a) + 1) written without a², which
        # overflows for σ of 1e-100, and without the cancellation of c − a when b ≪ a
        root = math.sqrt(1.0 + 2.0 * b / a)
        c = a * root
        self._a, self._c, self._B = a, c, (b / a) / (1.0 + b / a + root)
        self._c_minus_a, self._c_over_a = 2.0 * b / (root + 1.0), root
        d = int(n_features)
        self.n_features = d
        # Enumerate multi-indices by total degree until n_terms are collected.
        indices, total = [], 0
        while len(indices) < n_terms:
            indices.extend(itertools.islice(_compositions(total, d), n_terms - len(indices)))
            total += 1
        self.multi_indices = np.array(indices[:n_terms], dtype=int).reshape(n_terms, d)
        degree = self.multi_indices.sum(axis=1)
        self.eigenvalues = (2.0 / (1.0 + b / a + root)) ** (d / 2.0) * self._B ** degree.astype(
            float
        )

    @property
    def n_terms(self):
        return len(self.eigenvalues)

    def eigenfunctions(self, X):
        """Evaluate the orthonormal eigenfunctions at the rows of ``X``: shape (m, n_terms).

        Raises
        ------
        ValueError
            If they overflow floating point (points far out in the measure's tails).
        """
        X = as_float_matrix(X, "X", allow_float32=False)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, expected {self.n_features}.")
        kmax = int(self.multi_indices.max())
        out = np.ones((len(X), self.n_terms))
        with np.errstate(over="ignore", invalid="ignore"):
            for j in range(self.n_features):
                table = self._one_dim(X[:, j], kmax)  # (m, kmax + 1)
                out *= table[:, self.multi_indices[:, j]]
        if not np.isfinite(out).all():
            raise ValueError(
                f"the eigenfunctions overflow floating point at X (largest |entry| "
                f"{float(np.abs(X).max()):.3g}): far out in the tails of the measure the "
                f"Hermite polynomials of degree up to {kmax} outgrow their Gaussian envelope. "
                "Use points nearer the measure's centre or fewer n_terms."
            )
        return out

    __call__ = eigenfunctions

    def _one_dim(self, x, kmax):
        c = self._c
        u = math.sqrt(2.0 * c) * x
        # Normalized Hermite polynomials h_k = H_k / sqrt(2^k k!) by their stable recurrence
        # h_{k+1} = sqrt(2/(k+1)) u h_k - sqrt(k/(k+1)) h_{k-1}.
        h = np.empty((len(x), kmax + 1))
        h[:, 0] = 1.0
        if kmax >= 1:
            h[:, 1] = math.sqrt(2.0) * u
        for k in range(1, kmax):
            h[:, k + 1] = (
                math.sqrt(2.0 / (k + 1)) * u * h[:, k] - math.sqrt(k / (k + 1)) * h[:, k - 1]
            )
        envelope = self._c_over_a**0.25 * np.exp(-self._c_minus_a * x**2)
        return h * envelope[:, None]

    @property
    def kernel(self):
        """The kernel these eigenpairs expand."""
        return RBF(self.gamma)

    def __repr__(self):
        return (
            f"GaussianMercer(gamma={self.gamma!r}, sigma={self.sigma!r}, "
            f"n_terms={self.n_terms}, n_features={self.n_features})"
        )


#: Largest ``n_terms`` :class:`GaussianMercer` accepts (its eigenvalues decay geometrically).
MAX_CLOSED_FORM_TERMS = 10**6


def _compositions(total, parts):
    """Yield the tuples of ``parts`` non-negative integers summing to ``total``, first entry
    descending, then the second, and so on (without recursion: ``parts`` may be thousands)."""
    c = [total] + [0] * (parts - 1)
    while True:
        yield tuple(c)
        # the last entry before the final one that can give a unit to its right neighbour
        i = next((j for j in range(parts - 2, -1, -1) if c[j] > 0), None)
        if i is None:
            return
        c[i] -= 1
        c[i + 1] = sum(c[i + 1 :]) + 1
        c[i + 2 :] = [0] * (parts - i - 2)


def gaussian_mercer_closed_form(gamma, sigma, n_terms, n_features=1):
    r"""Closed-form Mercer eigenpairs of the RBF kernel ``RBF(gamma)`` under
    :math:`\mathcal N(0, \sigma^2 I_d)`; see :class:`GaussianMercer`
    (Rasmussen and Williams, 2006, §4.3.1).

    Returns
    -------
    GaussianMercer
        ``eigenvalues`` and the callable ``eigenfunctions(X)``, in the same form as
        :func:`mercer_expansion` returns, so the two can be compared term by term.
    """
    return GaussianMercer(gamma, sigma, n_terms, n_features)
