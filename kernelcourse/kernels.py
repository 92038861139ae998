r"""Kernels as small objects, and the rules that build new kernels from old ones.

A kernel :math:`K : \mathcal X \times \mathcal X \to \mathbb R` is symmetric and positive
semidefinite: every Gram matrix :math:`\mathbf K_{ij} = K(x_i, x_j)` has non-negative eigenvalues
(Schölkopf and Smola, 2002; :doc:`chapter 1 </book/01_kernels_and_feature_maps>`). Every kernel is
an inner product :math:`K(x, y) = \phi(x)^T \phi(y)` in some feature space; where that space is
finite this module also returns the explicit feature map :math:`\phi`.

Each kernel object is callable as ``k(X, Y=None)`` and returns the Gram block
:math:`[K(x_i, y_j)]_{ij}` (``Y=None`` means ``Y = X``). The construction rules
(:doc:`chapter 1 </book/01_kernels_and_feature_maps>`) are
operators on these objects:

========================  =====================================  ==============================
kernel                    feature map                            dimension of :math:`\phi`
========================  =====================================  ==============================
``Linear(A)``: xᵀAy        :math:`\sqrt{A}\,x`                     d
``c * k1``                :math:`\sqrt{c}\,\phi_1(x)`             D₁
``k1 + k2``               :math:`[\phi_1(x); \phi_2(x)]`          D₁ + D₂
``k1 * k2``               :math:`\phi_1(x) \otimes \phi_2(x)`     D₁ · D₂
``weighted(k1, f)``       :math:`f(x)\,\phi_1(x)`                 D₁
``exp(k1)``               (infinite)                             ∞
========================  =====================================  ==============================
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal

import numpy as np
from numba import njit
from scipy.spatial.distance import cdist, pdist, squareform

from ._validation import (
    all_finite,
    as_float_matrix,
    check_count,
    check_memory,
    check_nonnegative,
    check_positive,
    check_same_features,
    check_vector_kernel,
    entry_variance,
    finite_gram,
)

__all__ = [
    "Kernel",
    "RBF",
    "Laplacian",
    "Matern",
    "Polynomial",
    "Linear",
    "Cosine",
    "Constant",
    "Scaled",
    "Sum",
    "Product",
    "Exponential",
    "Weighted",
    "exp",
    "weighted",
    "gram",
    "is_psd",
    "resolve_kernel",
    "KERNEL_NAMES",
]


def _in_float64(evaluate, *arrays):
    """``evaluate`` on float32 arrays (None passes through) redone in float64 and cast back.
    A float32 result can overflow where the kernel's value does not: γ = 1e39 is inf in
    float32 while γ xᵀy = 0.2 for x near 1e-20. Only a value beyond float32's range stays
    inf after the cast, and is then refused as an overflow."""
    wide = [None if A is None else A.astype(np.float64) for A in arrays]
    return evaluate(*wide).astype(np.float32)


class Kernel:
    """Base class: a positive semidefinite kernel evaluated block-wise.

    Subclasses implement ``_gram(X, Y)`` (``Y is None`` for the symmetric block), ``_diag(X)``
    and, where the feature space is finite, ``_features(X)`` and ``feature_dim(d)``.
    """

    #: True when K(x, y) depends on x - y only, so Bochner's theorem applies (chapter 5).
    shift_invariant = False
    #: What the kernel compares: "vectors" (rows of a numeric array) or "strings"; the
    #: construction rules only combine kernels on the same inputs.
    domain = "vectors"

    # -- evaluation ---------------------------------------------------------------------------
    def __call__(self, X, Y=None):
        """Gram block ``[K(x_i, y_j)]``, shape ``(len(X), len(Y))``; ``Y=None`` gives K(X, X).

        float32 inputs (both of them) give a float32 block; anything else float64.

        Raises
        ------
        ValueError
            If the block overflows (inputs too large in magnitude for this kernel): a Gram
            block never holds NaN or infinity.
        """
        X = as_float_matrix(X, "X")
        if Y is not None:
            Y = as_float_matrix(Y, "Y")
            check_same_features(X, Y)
            if X.dtype != Y.dtype:
                X, Y = X.astype(np.float64), Y.astype(np.float64)
        return self._checked_gram(X, Y)

    def _checked_gram(self, X, Y, x_name="X", y_name="Y"):
        # Finite inputs give a non-finite entry only through overflow.
        with np.errstate(over="ignore", invalid="ignore"):
            K = self._gram(X, Y)
            _check_block(self, "_gram", K, (len(X), len(X if Y is None else Y)))
            if not all_finite(K) and X.dtype == np.float32:
                K = _in_float64(self._gram, X, Y)
        if not all_finite(K):
            raise _overflow_error(self, "Gram matrix", X, Y, x_name, y_name)
        return K

    def _against(self, Y):
        """``(X, out) ↦ K(X, Y)`` for many blocks X against one fixed Y (finite float arrays
        of one dtype, as a solver holds them), checked as a call is and written into ``out``
        (shape (len(X), len(Y))): an SVM's kernel rows against its active points, into a
        buffer that is reused because a fresh block of that size costs its page faults on
        every call. A kernel that can do the work depending on Y alone once overrides it."""
        return _gram_rows(self, Y)

    def diag(self, X):
        """The diagonal ``K(x_i, x_i)`` without forming the Gram matrix."""
        X = as_float_matrix(X, "X")
        with np.errstate(over="ignore", invalid="ignore"):
            d = self._diag(X)
            _check_block(self, "_diag", d, (len(X),))
            if not np.isfinite(d).all() and X.dtype == np.float32:
                d = _in_float64(self._diag, X)
        if not np.isfinite(d).all():
            raise _overflow_error(self, "diagonal", X, None, "X", "Y")
        return d

    def feature_map(self, X):
        r"""Explicit features :math:`\phi(X)` with :math:`\phi(x)^T\phi(y) = K(x, y)`.

        Raises
        ------
        ValueError
            If the kernel's feature space is infinite-dimensional (RBF, Laplacian, Matérn,
            ``exp``); approximate it with random features or Nyström instead. Also if the
            features overflow (inputs too large in magnitude for this kernel).
        MemoryError
            If the features need more memory than the machine has (a polynomial map of high
            degree on many features: D = C(d + p, p) columns).
        """
        X = as_float_matrix(X, "X")
        with np.errstate(over="ignore", invalid="ignore"):
            F = self._features(X)
        if not np.isfinite(F).all():
            raise _overflow_error(self, "feature map", X, None, "X", "Y")
        return F

    def feature_dim(self, n_features):
        """Dimension D of the feature space for inputs with ``n_features`` coordinates
        (``math.inf``: infinite)."""
        return math.inf

    @property
    def has_finite_features(self):
        """Whether :meth:`feature_map` is available."""
        return self.feature_dim(1) != math.inf

    def _features(self, X):
        raise ValueError(
            f"{self!r} has an infinite-dimensional feature space, so feature_map is not "
            "defined; use kernelcourse.features (random Fourier features or Nystroem) for a "
            "finite approximation."
        )

    def _diag(self, X):  # generic fallback, one row at a time
        return np.array([self._gram(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(len(X))])

    # -- construction rules (chapter 1) -------------------------------------------------------
    def _check_domain(self, other, op):
        if other.domain != self.domain:
            raise TypeError(
                f"cannot form {self!r} {op} {other!r}: the first compares {self.domain}, the "
                f"second {other.domain}, so no input fits both."
            )

    # numpy would broadcast an array operand and call __radd__ once per entry (an array of
    # kernels); with this, its operators defer to the kernel's, which refuse arrays by name
    __array_ufunc__ = None

    def _check_operand(self, other, op):
        """``other`` as a kernel or a real number for ``self op other``, else a TypeError."""
        if isinstance(other, np.ndarray) and other.ndim == 0 and other.dtype.kind in "iuf":
            other = other.item()  # a 0-d array is a number
        if isinstance(other, Kernel):
            self._check_domain(other, op)
        elif not _is_scalar(other):
            what = (
                f"an array of shape {other.shape}"
                if isinstance(other, np.ndarray)
                else f"an object of type {type(other).__name__}"
            )
            raise TypeError(
                f"cannot form {self!r} {op} {what}: the other operand must be a kernel or a "
                "real number (a constant kernel or a scale c)."
            )
        return other

    def __add__(self, other):
        other = self._check_operand(other, "+")
        if isinstance(other, Kernel):
            return Sum(self, other)
        return Sum(self, Constant(other))

    __radd__ = __add__

    def __mul__(self, other):
        other = self._check_operand(other, "*")
        if isinstance(other, Kernel):
            return Product(self, other)
        return Scaled(other, self)

    __rmul__ = __mul__

    # -- display ------------------------------------------------------------------------------
    def _params(self):
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and _params_equal(self._params(), other._params())

    def __hash__(self):
        return hash(repr(self))


def _check_block(kernel, method, K, shape):
    """Refuse what a kernel's own ``_gram`` or ``_diag`` returned unless it is a real numpy
    array of ``shape``: a subclass's block of the wrong shape failed far away ("y has 20
    entries but the data have 1 rows" in an SVM), a list in a NumPy attribute lookup, and a
    complex one lost its imaginary part with only numpy's ComplexWarning."""
    if not isinstance(K, np.ndarray) or K.dtype.kind not in "biuf" or K.shape != shape:
        got = (
            f"{type(K).__name__} of dtype {K.dtype} and shape {K.shape}"
            if isinstance(K, np.ndarray)
            else type(K).__name__
        )
        raise TypeError(
            f"{method} of the kernel {kernel!r} must return a real numpy array of shape "
            f"{shape}, got {got}."
        )


def _overflow_error(kernel, what, X, Y, x_name, y_name):
    big = float(np.abs(X).max())
    names = f"{x_name} (largest |entry| {big:.3g})"
    if Y is not None:
        names += f" and {y_name} (largest |entry| {float(np.abs(Y).max()):.3g})"
    return ValueError(
        f"the {what} of the kernel {kernel!r} on {names} overflows floating point (NaN or "
        "infinity): "
        "the inputs are too large in magnitude for this kernel. Rescale them (e.g. "
        "StandardScaler) or choose a kernel that stays finite."
    )


def _is_scalar(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _params_equal(a, b):
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
                return False
            if x.shape != y.shape or not np.array_equal(x, y):
                return False
        elif x != y:
            return False
    return True


# -- distances ------------------------------------------------------------------------------------
def _square_safe(dtype):
    """Beyond this magnitude a squared norm in ``dtype`` may overflow, and below its inverse
    it may underflow: centred inputs outside are scaled by a power of two first. A quarter
    of the exponent range, 2**250 in float64 and 2**26 in float32 (whose squares overflow
    from 1.8e19 on and leave the normal range below 1.1e-19)."""
    return 2.0 ** (np.finfo(dtype).maxexp // 4 - 6)


def _power_of_two_scale(big, dtype):
    """The power of two s that centred inputs of largest magnitude ``big`` are divided by
    before squaring (:func:`_square_safe`), 1.0 where they need none. s is at least the
    smallest normal number of ``dtype``, so that dividing by it is exact there too."""
    safe = _square_safe(dtype)
    if big > safe or 0.0 < big < 1.0 / safe:
        return max(math.ldexp(1.0, math.frexp(big)[1] - 1), float(np.finfo(dtype).tiny))
    return 1.0


def centre_and_scale(X, Y=None):
    r"""X and Y moved by a common vector c and divided by a common power of two s.

    Distances do not change under a common shift, ‖x − y‖ = ‖(x − c) − (y − c)‖, and the
    expansion ‖x‖² + ‖y‖² − 2xᵀy cancels catastrophically when the data sit far from the
    origin (timestamps, coordinates in metres). Centring first keeps its round-off at the
    scale of the data's spread. c is the mean of Y (of X when ``Y is None``), rounded to the
    inputs' dtype: any common vector is exact, and rows near c are moved without round-off.
    When the centred data are so large that their squares overflow, or so small that they
    underflow, they are divided by a power of two s (exact); then ‖x − y‖ = s ‖x̃ − ỹ‖.

    Returns
    -------
    Xc, Yc, s : arrays (``Yc`` None when ``Y`` is None) and a float (1.0 when no scaling).
    """
    ref = X if Y is None else Y
    c = ref.mean(axis=0, dtype=np.float64).astype(X.dtype)
    Xc = X - c
    Yc = None if Y is None else Y - c
    big = float(np.abs(Xc).max())
    if Yc is not None:
        big = max(big, float(np.abs(Yc).max()))
    s = _power_of_two_scale(big, Xc.dtype)  # 2**(e-1) <= big < 2**e
    if s != 1.0:
        Xc /= s
        if Yc is not None:
            Yc /= s
    return Xc, Yc, s


def _expanded_squared_distances(X, Y):
    XX = np.einsum("ij,ij->i", X, X)
    if Y is None:
        D = X @ X.T
        YY = XX
    else:
        D = X @ Y.T
        YY = np.einsum("ij,ij->i", Y, Y)
    D *= -2
    D += XX[:, None]
    D += YY[None, :]
    np.maximum(D, 0, out=D)
    _refine_near_pairs(D, X, X if Y is None else Y, 1.0, _round_off_limit(D.dtype, XX, YY))
    if Y is None:
        # ‖x‖² + ‖y‖² − 2xᵀy is symmetric in exact arithmetic only; make it so in floating point.
        _copy_upper_to_lower(D)
        np.fill_diagonal(D, 0)
    return D


def distances(X, Y=None):
    """Euclidean distances ‖x_i − y_j‖, accurate far from the origin and finite whenever
    representable (squares are formed on centred rows scaled by a power of two)."""
    Xc, Yc, s = centre_and_scale(X, Y)
    r = np.sqrt(_expanded_squared_distances(Xc, Yc))
    if s != 1.0:
        with np.errstate(over="ignore"):
            r *= s
    return r


# Near pairs recomputed at a time: duplicated data can make most of a block near, and all
# their differences at once would take (n m, d) memory (20 GB for 3000 rows of dimension 200).
_NEAR_PAIR_CHUNK = 65536


def _refine_near_pairs(B, X, Z, factor, limit, xp=np):
    """Recompute ``B = factor · ‖x − z‖²`` from the differences where the expansion is within
    ``limit`` of 0, its round-off level (a few ε times the largest squared norms): there it
    has no correct digit left (and √D, as in Matérn, or a large γ, as in an RBF with K ≈ I,
    magnifies the error). Such near pairs (duplicates, near duplicates) are usually few, and
    in few rows (a row of X that is also a centre): on numpy each row's extreme entry, one
    vectorised reduction, picks those rows, and only they are compared and searched, where a
    comparison and a ``nonzero`` over the whole block cost several times more, on every
    block. ``xp`` is the array library of B, X and Z: numpy here, any array-API library on
    :mod:`kernelcourse.devices`' path, which compares the whole block. Returns B."""

    # B has the sign of factor (D >= 0, −γD <= 0): one comparison, no |B| temporary
    def within(A):
        return A <= limit if factor > 0 else A >= -limit

    if xp is np:
        if B.size == 0:
            return B
        # fmin/fmax pass over NaN: a NaN does not hide a near pair in its row
        extreme = np.fmin.reduce(B, axis=1) if factor > 0 else np.fmax.reduce(B, axis=1)
        candidates = np.flatnonzero(within(extreme))
        at, cols = np.nonzero(within(B[candidates]))
        rows = candidates[at]
        near = rows, cols  # an index in the order of rows and cols
    else:
        near = within(B)
        rows, cols = xp.nonzero(near)  # a mask, whose order is nonzero's
    count = rows.shape[0]
    if count == 0:
        return B
    parts = []
    for start in range(0, count, _NEAR_PAIR_CHUNK):
        stop = min(start + _NEAR_PAIR_CHUNK, count)  # the array API has no stop past the end
        r, c = rows[start:stop], cols[start:stop]
        diff = xp.take(X, r, axis=0) - xp.take(Z, c, axis=0)
        parts.append(np.einsum("ij,ij->i", diff, diff) if xp is np else xp.sum(diff * diff, axis=1))
    B[near] = factor * (parts[0] if len(parts) == 1 else xp.concat(parts))
    return B


def _round_off_limit(dtype, XX, YY):
    """64 ε (max ‖x‖² + max ‖y‖²): the expansion's round-off level in a block."""
    top = float(XX.max(initial=0.0)) + float(YY.max(initial=0.0))
    return 64 * float(np.finfo(dtype).eps) * top


def squared_distances(X, Y=None):
    """Squared Euclidean distances ‖x_i − y_j‖² with one matrix product (exactly symmetric
    with zero diagonal when ``Y is None``), accurate far from the origin (the inputs are
    centred first, see :func:`centre_and_scale`). Entries beyond the float range are inf."""
    Xc, Yc, s = centre_and_scale(X, Y)
    D = _expanded_squared_distances(Xc, Yc)
    if s != 1.0:
        with np.errstate(over="ignore"):
            D *= s
            D *= s
    return D


def _copy_upper_to_lower(D, block=512):
    """Make square ``D`` exactly symmetric in place, block by block (cache-friendly)."""
    n = len(D)
    for i in range(0, n, block):
        diag = D[i : i + block, i : i + block]
        lower = np.tril_indices(len(diag), -1)
        diag[lower] = diag.T[lower]
        for j in range(i + block, n, block):
            D[j : j + block, i : i + block] = D[i : i + block, j : j + block].T


def unit_rows(X):
    """The rows of X divided by their Euclidean norms (zero rows stay zero), and the norms.

    Each row is first divided by its largest |entry|, so that neither 1e200 (whose square
    overflows) nor 1e-200 (whose square underflows to 0) loses the direction.
    """
    return _unit_rows_and_norms(X)[0]


def _unit_rows_and_norms(X):
    peak = np.abs(X).max(axis=1)
    peak[peak == 0] = 1.0
    Xs = X / peak[:, None]
    norms = np.sqrt(np.einsum("ij,ij->i", Xs, Xs))
    unit = Xs / np.where(norms == 0, 1.0, norms)[:, None]
    with np.errstate(over="ignore"):
        return unit, norms * peak


def _l1_distances(X, Y):
    """ℓ₁ distances in float64 (scipy computes them so for float32 inputs too)."""
    if Y is None:
        return squareform(pdist(X, "cityblock"))
    return cdist(X, Y, "cityblock")


# -- base kernels ---------------------------------------------------------------------------------
def _check_gamma(gamma):
    """γ as a float > 0, or as a 1-D array of floats > 0 (one per feature)."""
    if np.ndim(gamma) == 0:
        return check_positive(gamma, "gamma")
    g = np.asarray(gamma)
    if not (np.issubdtype(g.dtype, np.number) and not np.iscomplexobj(g)) or g.dtype == bool:
        raise TypeError(f"gamma must be a real number or a 1-D array of them, got dtype {g.dtype}.")
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"gamma must be a number or a non-empty 1-D array, got shape {g.shape}.")
    g = g.astype(np.float64)
    if not np.isfinite(g).all() or (g <= 0).any():
        raise ValueError(f"gamma must hold finite numbers > 0, got {gamma!r}.")
    g.setflags(write=False)
    return g


class RBF(Kernel):
    r"""Radial basis function (Gaussian) kernel :math:`K(x, y) = \exp(-\gamma \|x - y\|^2)`.

    Its values lie in (0, 1], with 1 exactly when x = y
    (:doc:`chapter 1 </book/01_kernels_and_feature_maps>`). With one :math:`\gamma_k` per
    feature it is the ARD kernel :math:`\exp(-\sum_k \gamma_k (x_k - y_k)^2)` (automatic
    relevance determination, Rasmussen & Williams 2006, § 5.1), the same as one γ = 1 on the
    rescaled inputs :math:`(\sqrt{\gamma_k}\, x_k)_k`; a bandwidth per feature (or per group
    of features) is what made random binning reach its best accuracy on Covertype
    (:doc:`chapter 11 </book/11_scaling_up>`).

    Parameters
    ----------
    gamma : float > 0 or array-like of shape (n_features,)
        Inverse squared length-scale γ, or one :math:`\gamma_k` per feature.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> K = RBF(gamma=0.5)(X)
    >>> print(np.round(K, 3))
    [[1.    0.607 0.135]
     [0.607 1.    0.082]
     [0.135 0.082 1.   ]]
    >>> print(np.round(RBF(gamma=[0.5, 0.0625])(X)[0], 3))
    [1.    0.607 0.779]
    """

    shift_invariant = True

    def __init__(self, gamma=1.0):
        self.gamma = _check_gamma(gamma)

    def _params(self):
        return {"gamma": self.gamma}

    def _scaled(self, X):
        """X with feature k multiplied by √γ_k (a per-feature γ), else X itself."""
        if np.ndim(self.gamma) == 0:
            return X
        if X.shape[1] != len(self.gamma):
            raise ValueError(
                f"gamma has {len(self.gamma)} entries (one per feature) but X has "
                f"{X.shape[1]} features."
            )
        return X * np.sqrt(self.gamma).astype(X.dtype)

    def _gram(self, X, Y):
        if np.ndim(self.gamma) != 0:  # ARD: one γ = 1 on the rescaled inputs
            Xs, Ys = self._scaled(X), None if Y is None else self._scaled(Y)
            if all_finite(Xs) and (Ys is None or all_finite(Ys)):
                return RBF(1.0)._gram(Xs, Ys).astype(X.dtype, copy=False)
            # √γ_k x_k beyond the float range (γ_k = 1e300 on x_k = 1e200, or beyond float32's):
            # rather than call finite inputs an overflow, sum γ_k (x_k − y_k)² one feature at a
            # time in float64, from the differences (no expansion, which would cancel the small
            # terms). A term beyond the range is inf, and K there 0, as it is to the precision.
            Y = X if Y is None else Y
            E = np.zeros((len(X), len(Y)))
            with np.errstate(over="ignore"):
                for k, r in enumerate(np.sqrt(np.asarray(self.gamma, dtype=np.float64))):
                    a = np.subtract.outer(0.5 * X[:, k].astype(np.float64), 0.5 * Y[:, k]) * r
                    E += 4.0 * (a * a)
            return np.exp(-E).astype(X.dtype, copy=False)
        Xc, Yc, s = centre_and_scale(X, Y)
        if s == 1.0:  # the rows' squared norms, for the bound and the augmented rows below
            xx = np.einsum("ij,ij->i", Xc, Xc)
            yy = None if Yc is None else np.einsum("ij,ij->i", Yc, Yc)
        if s != 1.0 or not _augmented_product_fits(self.gamma, xx, yy, Xc.dtype):
            # scaled inputs: −γ s² ‖x̃ − ỹ‖². γ s² and the product are taken in float64: in
            # float32, γ alone underflows to 0 for data at 1e20 (γ = 1e-41), and K would be 1.
            # Beyond the float range the exponent is −inf; 0 stays 0 (inf · 0 would be NaN).
            # The same path serves a γ so large that the augmented rows below overflow
            # (γ = 1e300 on data at 1e4, γ = 1e39 in float32), where K is about I, not NaN.
            E = _expanded_squared_distances(Xc, Yc)
            with np.errstate(over="ignore"):
                factor = -self.gamma * s * s
                np.multiply(E, factor, out=E, where=E != 0, dtype=np.float64, casting="unsafe")
            return np.exp(E, out=E)
        # The exponent −γ‖x − y‖² = 2γ xᵀy − γ‖x‖² − γ‖y‖² comes out of one matrix product of
        # augmented rows [x, 1, γ‖x‖²] and [2γ y, −γ‖y‖², −1]: no separate passes over the
        # n × m block to add the norms and scale, which matters when memory is the bottleneck.
        # The rows are centred first (centre_and_scale), so the expansion does not cancel.
        X, Y = Xc, Yc
        g = self.gamma
        h = g * xx
        left = np.hstack([X, np.ones((len(X), 1), X.dtype), h[:, None]])
        if Y is None:
            hy, Z = h, X
        else:
            hy, Z = g * yy, Y
        right = np.hstack([(2.0 * g) * Z, -hy[:, None], -np.ones((len(Z), 1), Z.dtype)])
        E = left @ right.T
        np.minimum(E, 0, out=E)  # round-off can make a squared distance slightly negative
        if h.max() + hy.max() > 16.0:
            # Only then can the expansion's error, a few ε·γ(‖x‖² + ‖y‖²), exceed ~50ε in K
            # (e.g. γ = 1e12, where K is I): recompute the near pairs. Below, it is not worth
            # a pass over the block.
            _refine_near_pairs(E, X, Z, -g, _round_off_limit(E.dtype, h, hy))
        if Y is None:
            _copy_upper_to_lower(E)
            np.fill_diagonal(E, 0)
        return np.exp(E, out=E)

    def _against(self, Y):
        # The right factor [2γ y, −γ‖y‖², −1] of _gram's product, the centring and the
        # bound that rules out overflow are computed once for all blocks against Y.
        if np.ndim(self.gamma) != 0:
            return super()._against(Y)
        c = Y.mean(axis=0, dtype=np.float64).astype(Y.dtype)
        Yc = Y - c
        if _power_of_two_scale(float(np.abs(Yc).max(initial=0.0)), Yc.dtype) != 1.0:
            return super()._against(Y)
        g = self.gamma
        with np.errstate(over="ignore", invalid="ignore"):
            hy = g * np.einsum("ij,ij->i", Yc, Yc)
            right = np.hstack([(2.0 * g) * Yc, -hy[:, None], -np.ones((len(Yc), 1), Yc.dtype)])
            right_norm = float(np.sqrt(np.einsum("ij,ij->i", right, right).max(initial=0.0)))
        huge = float(np.finfo(Y.dtype).max) / 4

        def rows(X, out):
            Xc = X - c
            if X.dtype != out.dtype or float(np.abs(Xc).max(initial=0.0)) > _square_safe(X.dtype):
                out[...] = self._checked_gram(X, Y)
                return out
            with np.errstate(over="ignore", invalid="ignore"):
                h = g * np.einsum("ij,ij->i", Xc, Xc)
                left = np.hstack([Xc, np.ones((len(Xc), 1), Xc.dtype), h[:, None]])
                E = np.matmul(left, right.T, out=out)
                _clip_near_pairs(E, Xc, Yc, h, hy, 64 * float(np.finfo(E.dtype).eps), g)
                np.exp(E, out=E)
                left_norm = float(np.sqrt(np.einsum("ij,ij->i", left, left).max(initial=0)))
            # |left_i · right_j| <= ‖left_i‖ ‖right_j‖ (Cauchy–Schwarz): below the float
            # range, no entry can be NaN or infinite, and the block needs no check. Above it,
            # a NaN comes from the augmented rows alone (a huge γ: K is about I, in [0, 1]),
            # so the block is computed as a call computes it.
            if not left_norm * right_norm < huge and not np.isfinite(E).all():
                out[...] = self._checked_gram(X, Y)
            return out

        return rows

    def _diag(self, X):
        self._scaled(X[:0])  # a γ per feature must match X's features, as in the Gram matrix
        return np.ones(len(X), dtype=X.dtype)


def _augmented_product_fits(gamma, xx, yy, dtype):
    """Whether the augmented rows [x, 1, γ‖x‖²] and [2γ y, −γ‖y‖², −1] of :meth:`RBF._gram`,
    and their products, stay well inside the float range of ``dtype``, from the squared
    norms ``xx`` and ``yy`` (None: Y is X) of the centred rows: 2γ(max ‖x‖² + max ‖y‖²)
    bounds every entry and partial sum (Cauchy–Schwarz)."""
    top = float(xx.max()) + (0.0 if yy is None else float(yy.max()))
    return 2.0 * gamma * max(top, 1.0) < float(np.finfo(dtype).max) / 16


def _gram_rows(kernel, Y):
    """:meth:`Kernel._against` without precomputation, for any kernel callable: one Gram
    block per call, checked by :func:`finite_gram` and written into ``out``."""

    def rows(X, out):
        out[...] = finite_gram(kernel, X, Y)
        return out

    return rows


@njit(cache=True, nogil=True)
def _clip_near_pairs(E, X, Y, h, hy, rel, g):
    """E = −γ‖x_i − y_j‖² from the expansion, made exact where it is at its round-off, in one
    pass. The expansion's error in entry (i, j) is a few ε γ(‖x_i‖² + ‖y_j‖²) = ε (h_i + hy_j);
    an entry within ``rel`` (64 ε) times that of 0 has no correct digit left and is recomputed
    from the differences, as :func:`_refine_near_pairs` does with the largest norms of the
    block. Positive entries (a distance below 0 by round-off) are among them. A row is
    scanned in chunks whose test has no branch (it vectorises); near pairs are rare."""
    n = E.shape[1]
    for i in range(E.shape[0]):
        row = E[i]
        hi = h[i]
        for start in range(0, n, 512):
            stop = min(n, start + 512)
            hit = False
            for j in range(start, stop):
                hit |= row[j] >= -rel * (hi + hy[j])
            if hit:
                for j in range(start, stop):
                    if row[j] >= -rel * (hi + hy[j]):
                        s = 0.0
                        for k in range(X.shape[1]):
                            d = float(X[i, k]) - float(Y[j, k])
                            s += d * d
                        row[j] = -g * s


class Laplacian(Kernel):
    r"""Laplacian kernel :math:`K(x, y) = \exp(-\gamma \|x - y\|_1)` (ℓ₁ distance).

    Parameters
    ----------
    gamma : float > 0
        Inverse length-scale γ.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Laplacian
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> print(np.round(Laplacian(gamma=1.0)(X), 3))
    [[1.    0.368]
     [0.368 1.   ]]
    """

    shift_invariant = True

    def __init__(self, gamma=1.0):
        self.gamma = check_positive(gamma, "gamma")

    def _params(self):
        return {"gamma": self.gamma}

    def _gram(self, X, Y):
        # −γ‖x − y‖₁ in float64, cast at the end: in float32, a γ beyond 3.4e38 is inf (and
        # inf · 0 NaN on the diagonal), and a distance beyond it inf where γ = 1e-39 makes
        # the exponent small.
        big = float(np.abs(X).max())
        if Y is not None:
            big = max(big, float(np.abs(Y).max()))
        if 2.0 * X.shape[1] * big < float(np.finfo(np.float64).max):  # ‖x − y‖₁ <= 2 d big
            K = _l1_distances(X, Y)
            K *= -self.gamma
        else:
            # rows at ±1e308: ‖x − y‖₁ overflows, yet γ = 1e-308 brings the exponent back.
            # On the inputs divided by a power of two s <= big < 2s (exact), the exponent
            # is −(γ s) ‖x̃ − ỹ‖₁; γ s may be inf, where the true exponent is −inf too (0
            # stays 0: inf · 0 would be NaN).
            s = math.ldexp(1.0, math.frexp(big)[1] - 1)
            K = _l1_distances(X / s, None if Y is None else Y / s)
            np.multiply(K, -self.gamma * s, out=K, where=K != 0)
        return np.exp(K, out=K).astype(X.dtype, copy=False)

    def _diag(self, X):
        return np.ones(len(X), dtype=X.dtype)


class Matern(Kernel):
    r"""Matérn kernel with smoothness ν ∈ {1/2, 3/2, 5/2} and length-scale ℓ.

    With :math:`r = \|x - y\|_2 / \ell`:

    * ν = 1/2: :math:`e^{-r}`
    * ν = 3/2: :math:`(1 + \sqrt3 r) e^{-\sqrt3 r}`
    * ν = 5/2: :math:`(1 + \sqrt5 r + 5r^2/3) e^{-\sqrt5 r}`

    Parameters
    ----------
    nu : {0.5, 1.5, 2.5}
        Smoothness; the closed forms above exist for half-integers only.
    length_scale : float > 0
        Length-scale ℓ.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Matern
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> print(np.round(Matern(nu=1.5, length_scale=1.0)(X[:1], X), 3))
    [[1.    0.483 0.14 ]]
    """

    shift_invariant = True
    SUPPORTED_NU = (0.5, 1.5, 2.5)

    def __init__(self, nu=1.5, length_scale=1.0):
        if not _is_scalar(nu) or nu not in self.SUPPORTED_NU:
            raise ValueError(
                f"nu must be one of {self.SUPPORTED_NU} (the half-integers with a closed form), "
                f"got {nu!r}."
            )
        self.nu = float(nu)
        self.length_scale = check_positive(length_scale, "length_scale")

    def _params(self):
        return {"nu": self.nu, "length_scale": self.length_scale}

    def _gram(self, X, Y):
        # r = s ‖x̃ − ỹ‖ / ℓ in float64, cast at the end: in float32, ℓ = 1e-300 is 0 (0 / 0
        # on the diagonal) and the distance between rows at ±1e38 overflows before ℓ = 1e300
        # brings it back to 1e-262.
        Xc, Yc, s = centre_and_scale(X, Y)
        r = np.sqrt(_expanded_squared_distances(Xc, Yc), dtype=np.float64)
        with np.errstate(over="ignore"):
            factor = s / self.length_scale
            if s == 1.0 or not math.isfinite(factor):
                # s / ℓ = inf: then ℓ < 1 and r / ℓ cannot underflow; inf where r is huge too
                r /= self.length_scale
                if s != 1.0:
                    r *= s
            else:
                r *= factor
        # e^{-1000} is 0 in every float type: capping r keeps poly(r)·e^{-r} from inf · 0
        np.minimum(r, 1e3, out=r)
        if self.nu == 0.5:
            K = np.exp(-r)
        elif self.nu == 1.5:
            t = math.sqrt(3.0) * r
            K = (1.0 + t) * np.exp(-t)
        else:
            t = math.sqrt(5.0) * r
            K = (1.0 + t + t**2 / 3.0) * np.exp(-t)
        return K.astype(X.dtype, copy=False)

    def _diag(self, X):
        return np.ones(len(X), dtype=X.dtype)


class Polynomial(Kernel):
    r"""Polynomial kernel :math:`K(x, y) = (\gamma\, x^T y + c_0)^p`.

    Its feature map is finite: with the augmented vector :math:`\tilde x = [\sqrt\gamma x;
    \sqrt{c_0}]`, :math:`\phi(x)` lists the monomials of degree p in :math:`\tilde x`, each
    scaled by the square root of its multinomial coefficient, so D = C(d + p, p)
    (C(d + p − 1, p) when :math:`c_0 = 0`). This is the product rule of chapter 1 applied p
    times, with repeated coordinates merged.

    Parameters
    ----------
    degree : int >= 1
        The power p.
    gamma : float > 0
        Scale γ of the inner product.
    coef0 : float >= 0
        Offset :math:`c_0`; it must be non-negative for the kernel to be PSD.

    Notes
    -----
    The default degree is 2 (the book's quadratic examples), not scikit-learn's 3; its
    ``coef0`` default is 1 like scikit-learn's ``polynomial_kernel`` (``SVC`` uses 0). A
    named "polynomial" kernel in the estimators takes γ = 1 / n_features by default.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Polynomial
    >>> k = Polynomial(degree=2, gamma=1.0, coef0=1.0)
    >>> X = np.array([[1.0, 2.0], [0.5, -1.0]])
    >>> print(k(X))
    [[36.      0.25  ]
     [ 0.25    5.0625]]
    >>> Phi = k.feature_map(X)
    >>> print(Phi.shape, np.allclose(Phi @ Phi.T, k(X)))
    (2, 6) True
    """

    def __init__(self, degree=2, gamma=1.0, coef0=1.0):
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}.")
        if degree > np.iinfo(np.int64).max:  # numpy's power cannot take it (OverflowError)
            raise ValueError(f"degree must be an integer below 2**63, got {degree!r}.")
        self.degree = int(degree)
        self.gamma = check_positive(gamma, "gamma")
        self.coef0 = check_nonnegative(coef0, "coef0")

    def _params(self):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}

    def _gram(self, X, Y):
        K = X @ (X if Y is None else Y).T
        K *= self.gamma
        K += self.coef0
        return K**self.degree

    def _diag(self, X):
        return (self.gamma * np.einsum("ij,ij->i", X, X) + self.coef0) ** self.degree

    def feature_dim(self, n_features):
        m = check_count(n_features, "n_features") + (1 if self.coef0 > 0 else 0)
        return math.comb(m + self.degree - 1, self.degree)

    def _features(self, X):
        cols = [math.sqrt(self.gamma) * X]
        if self.coef0 > 0:
            cols.append(np.full((len(X), 1), math.sqrt(self.coef0), dtype=X.dtype))
        Z = np.hstack(cols)
        p = self.degree
        D = self.feature_dim(X.shape[1])
        # D, an exact integer, passes the float range from degree 10**5 on 100 features
        check_memory(
            len(X) * D * X.itemsize,
            f"the feature map of {self!r} on {X.shape[1]} features (D = {Decimal(D):.3g} columns)",
            "lower the degree, or use the Gram matrix k(X) instead of explicit features",
        )
        return _scaled_monomials(Z, p, D)


def _scaled_monomials(Z, p, D):
    r"""The D monomials :math:`\sqrt{p! / \prod_k c_k!}\, \prod_k z_k^{c_k}` of degree p in
    the columns of Z, one per multiset of p column indices, in the order of
    ``itertools.combinations_with_replacement(range(m), p)``.

    Built degree by degree, a block of columns at a time rather than one column per Python
    step (D reaches 1.7e8 for p = 3 on 1000 features): in that order, the monomials of degree
    k that extend one of degree k − 1 with last index l are its product with z_l, …, z_m, a
    contiguous block. The products are formed left to right, as ``np.prod`` of the indexed
    columns would; the multinomial coefficient of an extension by j is the prefix's times
    k / (multiplicity of j after it), exact in Python integers.
    """
    n, m = Z.shape
    # degree 1: the columns themselves; per monomial its last index, that index's
    # multiplicity and the multinomial coefficient
    prev, last, mult, coef = Z, list(range(m)), [1] * m, [1] * m
    for k in range(2, p + 1):
        final = k == p
        out = np.empty((n, D if final else sum(m - l for l in last)), dtype=Z.dtype)
        new_last, new_mult, new_coef = [], [], []
        pos = 0
        for c, l in enumerate(last):
            width = m - l
            block = out[:, pos : pos + width]
            np.multiply(prev[:, c : c + 1], Z[:, l:], out=block)
            repeat, fresh = coef[c] * k // (mult[c] + 1), coef[c] * k  # z_l again, or j > l
            if final:
                block[:, 0] *= math.sqrt(repeat)
                block[:, 1:] *= math.sqrt(fresh)
            else:
                new_last.extend(range(l, m))
                new_mult += [mult[c] + 1] + [1] * (width - 1)
                new_coef += [repeat] + [fresh] * (width - 1)
            pos += width
        prev, last, mult, coef = out, new_last, new_mult, new_coef
    return prev


class Linear(Kernel):
    r"""Linear kernel :math:`K(x, y) = x^T A y` with a symmetric PSD matrix A (identity if None).

    Feature map :math:`\phi(x) = \sqrt{A}\,x`, with :math:`\sqrt A` the symmetric square root
    (:doc:`chapter 1 </book/01_kernels_and_feature_maps>`, first construction rule).

    Parameters
    ----------
    A : array of shape (d, d) or None
        Symmetric positive semidefinite weight matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Linear
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> print(Linear()(X))
    [[ 5. 11.]
     [11. 25.]]
    >>> print(Linear(A=np.diag([1.0, 0.0]))(X))
    [[1. 3.]
     [3. 9.]]
    """

    def __init__(self, A=None):
        if A is None:
            self.A = None
            self._sqrt_A = None
            return
        A = as_float_matrix(A, "A", allow_float32=False)
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"A must be square, got shape {A.shape}.")
        scale = max(1.0, float(np.abs(A).max()))
        if not np.allclose(A, A.T, rtol=0, atol=1e-12 * scale):
            raise ValueError("A must be symmetric; pass (A + A.T) / 2 if that is what you meant.")
        eigvals, eigvecs = np.linalg.eigh(A)
        if eigvals.min() < -1e-10 * scale:
            raise ValueError(
                f"A must be positive semidefinite, but its smallest eigenvalue is "
                f"{eigvals.min():.3g}; xᵀAy is not a kernel otherwise."
            )
        self.A = A
        self._sqrt_A = (eigvecs * np.sqrt(np.clip(eigvals, 0, None))) @ eigvecs.T

    def _params(self):
        return {"A": self.A}

    def __repr__(self):
        # the matrix itself is too long (and too round-off sensitive) to print
        return (
            "Linear()" if self.A is None else f"Linear(A=<{len(self.A)}×{len(self.A)} PSD matrix>)"
        )

    def _check_dim(self, X):
        if self.A is not None and X.shape[1] != self.A.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} features but A is {self.A.shape[0]}×{self.A.shape[0]}."
            )

    def _gram(self, X, Y):
        self._check_dim(X)
        if self.A is None:
            return X @ (X if Y is None else Y).T
        XA = X @ self.A.astype(X.dtype, copy=False)
        return XA @ (X if Y is None else Y).T

    def _diag(self, X):
        self._check_dim(X)
        if self.A is None:
            return np.einsum("ij,ij->i", X, X)
        # A in X's dtype, as in the Gram matrix: float32 rows give a float32 diagonal
        return np.einsum("ij,ij->i", X @ self.A.astype(X.dtype, copy=False), X)

    def feature_dim(self, n_features):
        return check_count(n_features, "n_features")

    def _features(self, X):
        self._check_dim(X)
        if self.A is None:
            return X.copy()
        return X @ self._sqrt_A.astype(X.dtype, copy=False)


class Cosine(Kernel):
    r"""Cosine similarity :math:`K(x, y) = x^T y / (\|x\| \|y\|)` (0 when either vector is 0).

    Feature map :math:`\phi(x) = x / \|x\|`: the weighting rule with :math:`f(x) = 1/\|x\|`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Cosine
    >>> print(np.round(Cosine()(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])), 4))
    [[0.7071]]
    """

    def _normalize(self, X):
        return unit_rows(X)

    def _gram(self, X, Y):
        Xn = self._normalize(X)
        return Xn @ (Xn if Y is None else self._normalize(Y)).T

    def _diag(self, X):
        # 1 for every non-zero row: its norm may underflow to 0 (rows at 1e-300)
        return np.any(X != 0, axis=1).astype(X.dtype)

    def feature_dim(self, n_features):
        return check_count(n_features, "n_features")

    def _features(self, X):
        return self._normalize(X)


class Constant(Kernel):
    r"""Constant kernel :math:`K(x, y) = c` with c >= 0; feature map :math:`\phi(x) = \sqrt c`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Constant
    >>> print(Constant(2.0)(np.zeros((2, 3))))
    [[2. 2.]
     [2. 2.]]
    """

    shift_invariant = True

    def __init__(self, c=1.0):
        self.c = check_nonnegative(c, "c")

    def _params(self):
        return {"c": self.c}

    def _gram(self, X, Y):
        return np.full((len(X), len(X) if Y is None else len(Y)), self.c, dtype=X.dtype)

    def _diag(self, X):
        return np.full(len(X), self.c, dtype=X.dtype)

    def feature_dim(self, n_features):
        return 1

    def _features(self, X):
        return np.full((len(X), 1), math.sqrt(self.c), dtype=X.dtype)


# -- construction rules ---------------------------------------------------------------------------
def _check_kernel(k, name, rule=None):
    """``k`` as a kernel; with ``rule`` (the kernel being built from it), also one on the
    inputs that ``rule`` takes: exp(K) of a string kernel would otherwise take vectors, and
    fail on strings with "X must be a numeric array" (kernelcourse.strings has its own
    rules, e.g. string_exp)."""
    if not isinstance(k, Kernel):
        raise TypeError(f"{name} must be a kernelcourse.kernels.Kernel, got {type(k).__name__}.")
    if rule is not None and k.domain != rule.domain:
        raise TypeError(
            f"{name} compares {k.domain}, but {type(rule).__name__} builds a kernel on "
            f"{rule.domain}; for string kernels use +, *, c * k, and string_exp or normalize "
            "from kernelcourse.strings."
        )
    return k


class Scaled(Kernel):
    r"""c · K₁ with c >= 0; feature map :math:`\sqrt c\,\phi_1(x)` (chapter 1).

    Examples
    --------
    >>> from kernelcourse.kernels import RBF
    >>> k = 2.0 * RBF(gamma=0.5)
    >>> print(type(k).__name__, k.c)
    Scaled 2.0
    """

    def __init__(self, c, k1):
        if _is_scalar(c) and c < 0:
            raise ValueError(f"c must be >= 0 (a negative multiple is not PSD), got {c!r}.")
        self.c = check_nonnegative(c, "c")
        self.k1 = _check_kernel(k1, "k1", self)
        self.shift_invariant = k1.shift_invariant

    def _params(self):
        return {"c": self.c, "k1": self.k1}

    def __repr__(self):
        return f"{self.c!r} * {self.k1!r}"

    def _gram(self, X, Y):
        K = self.k1._gram(X, Y)
        K *= self.c
        return K

    def _diag(self, X):
        return self.c * self.k1._diag(X)

    def feature_dim(self, n_features):
        return self.k1.feature_dim(n_features)

    def _features(self, X):
        if not self.has_finite_features:
            return super()._features(X)
        return math.sqrt(self.c) * self.k1._features(X)


class Sum(Kernel):
    r"""K₁ + K₂; feature map :math:`[\phi_1(x); \phi_2(x)]` of dimension D₁ + D₂ (chapter 1).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Linear, Polynomial
    >>> k = Linear() + Polynomial(degree=2)
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> print(type(k).__name__, k.feature_dim(2))
    Sum 8
    >>> print(np.allclose(k(X), Linear()(X) + Polynomial(degree=2)(X)))
    True
    """

    def __init__(self, k1, k2):
        self.k1 = _check_kernel(k1, "k1", self)
        self.k2 = _check_kernel(k2, "k2", self)
        self.shift_invariant = k1.shift_invariant and k2.shift_invariant

    def _params(self):
        return {"k1": self.k1, "k2": self.k2}

    def __repr__(self):
        return f"({self.k1!r} + {self.k2!r})"

    def _gram(self, X, Y):
        K = self.k1._gram(X, Y)
        K += self.k2._gram(X, Y)
        return K

    def _diag(self, X):
        return self.k1._diag(X) + self.k2._diag(X)

    def feature_dim(self, n_features):
        return self.k1.feature_dim(n_features) + self.k2.feature_dim(n_features)

    def _features(self, X):
        if not self.has_finite_features:
            return super()._features(X)
        return np.hstack([self.k1._features(X), self.k2._features(X)])


class Product(Kernel):
    r"""K₁ · K₂; feature map :math:`\phi_1(x) \otimes \phi_2(x)` of dimension D₁ · D₂.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Linear, RBF
    >>> k = Linear() * RBF(gamma=1.0)
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> print(type(k).__name__, np.round(k(X), 3).tolist())
    Product [[1.0, 0.368], [0.368, 2.0]]
    """

    def __init__(self, k1, k2):
        self.k1 = _check_kernel(k1, "k1", self)
        self.k2 = _check_kernel(k2, "k2", self)
        self.shift_invariant = k1.shift_invariant and k2.shift_invariant

    def _params(self):
        return {"k1": self.k1, "k2": self.k2}

    def __repr__(self):
        return f"({self.k1!r} * {self.k2!r})"

    def _gram(self, X, Y):
        K = self.k1._gram(X, Y)
        K *= self.k2._gram(X, Y)
        return K

    def _diag(self, X):
        return self.k1._diag(X) * self.k2._diag(X)

    def feature_dim(self, n_features):
        return self.k1.feature_dim(n_features) * self.k2.feature_dim(n_features)

    def _features(self, X):
        if not self.has_finite_features:
            return super()._features(X)
        F1, F2 = self.k1._features(X), self.k2._features(X)
        # row-wise Kronecker product: (φ₁ ⊗ φ₂)(x)[a·D₂ + b] = φ₁(x)[a] φ₂(x)[b]
        return (F1[:, :, None] * F2[:, None, :]).reshape(len(X), -1)


class Exponential(Kernel):
    r"""exp(K₁), a kernel because exp is a limit of sums of products of K₁ with itself.

    Its feature space is infinite-dimensional (chapter 1's table leaves the map out).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Linear, exp
    >>> k = exp(Linear())
    >>> print(type(k).__name__, np.round(k(np.array([[1.0]])), 4))
    Exponential [[2.7183]]
    """

    def __init__(self, k1):
        self.k1 = _check_kernel(k1, "k1", self)

    def _params(self):
        return {"k1": self.k1}

    def __repr__(self):
        return f"exp({self.k1!r})"

    def _gram(self, X, Y):
        K = self.k1._gram(X, Y)
        return np.exp(K, out=K)

    def _diag(self, X):
        return np.exp(self.k1._diag(X))


class Weighted(Kernel):
    r"""f(x) · K₁(x, y) · f(y) for a real function f; feature map :math:`f(x)\,\phi_1(x)`.

    Parameters
    ----------
    k1 : Kernel
    f : callable
        Maps an (n, d) array to n real weights.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF, weighted
    >>> k = weighted(RBF(gamma=1.0), lambda X: 2.0 * np.ones(len(X)))
    >>> print(type(k).__name__, k(np.zeros((1, 2))))
    Weighted [[4.]]
    """

    def __init__(self, k1, f):
        self.k1 = _check_kernel(k1, "k1", self)
        if not callable(f):
            raise TypeError(f"f must be a callable mapping (n, d) arrays to n weights, got {f!r}.")
        self.f = f

    def _params(self):
        return {"k1": self.k1, "f": self.f}

    def __repr__(self):
        name = getattr(self.f, "__name__", repr(self.f))
        return f"weighted({self.k1!r}, f={name})"

    def _weights(self, X):
        w = np.asarray(self.f(X))
        if w.dtype.kind not in "biuf":
            raise TypeError(f"f must return real weights, got dtype {w.dtype}.")
        w = w.astype(X.dtype, copy=False)
        if w.shape != (len(X),):
            raise ValueError(
                f"f must return one weight per row: expected shape ({len(X)},), got {w.shape}."
            )
        if not np.isfinite(w).all():
            raise ValueError("f returned NaN or infinity for some rows.")
        return w

    def _gram(self, X, Y):
        wx = self._weights(X)
        wy = wx if Y is None else self._weights(Y)
        K = self.k1._gram(X, Y)
        K *= wx[:, None]
        K *= wy[None, :]
        if Y is None:  # (K_ij w_i) w_j and (K_ji w_j) w_i round differently
            _copy_upper_to_lower(K)
        return K

    def _diag(self, X):
        return self._weights(X) ** 2 * self.k1._diag(X)

    def feature_dim(self, n_features):
        return self.k1.feature_dim(n_features)

    def _features(self, X):
        if not self.has_finite_features:
            return super()._features(X)
        return self._weights(X)[:, None] * self.k1._features(X)


def exp(k):
    """The kernel exp(K) (the last construction rule of
    :doc:`chapter 1 </book/01_kernels_and_feature_maps>`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Linear, exp
    >>> X = np.array([[0.5], [1.0]])
    >>> print(np.round(exp(Linear())(X), 3))
    [[1.284 1.649]
     [1.649 2.718]]
    """
    return Exponential(k)


def weighted(k, f):
    """The kernel f(x) K(x, y) f(y) (the weighting rule of
    :doc:`chapter 1 </book/01_kernels_and_feature_maps>`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Linear, weighted
    >>> k = weighted(Linear(), lambda X: X[:, 0])
    >>> print(k(np.array([[2.0]])))
    [[16.]]
    """
    return Weighted(k, f)


# -- Gram matrices --------------------------------------------------------------------------------
def gram(kernel, X):
    """The Gram matrix :math:`\\mathbf K_{ij} = K(x_i, x_j)` of ``kernel`` on the rows of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF, gram
    >>> X = np.random.default_rng(0).normal(size=(5, 2))
    >>> K = gram(RBF(gamma=1.0), X)
    >>> print(K.shape, np.allclose(K, K.T), np.allclose(np.diag(K), 1.0))
    (5, 5) True True
    """
    return _check_kernel(kernel, "kernel")(X)


def is_psd(K, tol=1e-10):
    r"""Whether ``K`` is symmetric positive semidefinite up to round-off.

    K is accepted when it is symmetric to ``tol`` relative to its largest entry, and its
    smallest eigenvalue is at least :math:`-\mathrm{tol} \cdot \lambda_{\max}` — the
    eigenvalue test of :doc:`chapter 1 </book/01_kernels_and_feature_maps>`. Both tests are
    relative, so the answer does not change when K is multiplied by a positive number: round-off
    in the eigenvalues is a multiple of the largest one, whatever the scale.

    Parameters
    ----------
    K : array of shape (n, n)
    tol : float >= 0
        Relative tolerance for round-off.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import RBF, is_psd
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> print(is_psd(RBF(gamma=0.5)(X)))
    True
    >>> print(is_psd(np.array([[1.0, 2.0], [2.0, 1.0]])))
    False
    """
    K = as_float_matrix(K, "K", allow_float32=False)
    tol = check_nonnegative(tol, "tol")
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be square, got shape {K.shape}.")
    scale = float(np.abs(K).max())
    with np.errstate(over="ignore"):  # K_ij − K_ji beyond the float range: inf, asymmetric
        asymmetry = np.abs(K - K.T).max()
    if asymmetry > max(tol, 1e-14) * scale:
        return False
    # The test is the same on K / s for a power of two s (exact). Entries near the float range
    # are scaled down first, or λ_max overflows to inf, and any λ_min (−1.7e308 for
    # [[1.5e308, 1.5e308], [1.5e308, −1e308]]) passes the test; tiny entries are scaled up, so
    # that eigvalsh works on numbers far from the subnormal range.
    s = math.ldexp(1.0, math.frexp(scale)[1] - 1) if scale > 1e150 or 0 < scale < 1e-150 else 1.0
    eigvals = np.linalg.eigvalsh(K / s if s != 1.0 else K)
    return bool(eigvals[0] >= -tol * eigvals[-1])  # false when λ_max < 0 too


# -- names used by the estimators ------------------------------------------------------------------
KERNEL_NAMES = ("rbf", "laplacian", "matern", "polynomial", "linear", "cosine")


def resolve_gamma(gamma, n_features, X=None):
    """The γ that an estimator's ``gamma=`` argument means: None is 1 / n_features (1 when
    that is not given), "scale" is 1 / (n_features · Var X) with X the training data (1 where
    the variance is 0), and anything else is γ itself, left for the kernel to check."""
    if isinstance(gamma, str):
        if gamma != "scale":
            raise ValueError(f'gamma must be a number > 0, "scale" or None, got {gamma!r}.')
        return _scale_gamma(X, n_features)
    if gamma is None:
        return 1.0 / n_features if n_features else 1.0
    return gamma


def _scale_gamma(X, n_features):
    """γ = 1 / (n_features · Var X) for ``gamma="scale"``; 1 where the variance is 0."""
    if X is None or n_features is None:
        raise ValueError('gamma="scale" needs the training data X and its n_features.')
    # Var X = v·m², m = max |X_ij|: γ = 1 / (n_features · v · m²), formed without squaring m
    v, m = entry_variance(X)
    if not (np.isfinite(v) and np.isfinite(m)):
        raise ValueError('gamma="scale" needs the variance of X, but X holds NaN or infinity.')
    if v <= 0:  # a constant X: scikit-learn's choice
        return 1.0
    with np.errstate(over="ignore", under="ignore"):
        gamma = float(np.float64(1.0 / m) / (n_features * v) / m)
    if not 0 < gamma < np.inf:
        raise ValueError(
            f'gamma="scale" is 1 / (n_features · Var X), but with Var X = {v:.3g} · {m:.3g}² '
            f"γ {'overflows' if gamma else 'underflows to 0'} in floating point; rescale X "
            "or pass a number for gamma."
        )
    return gamma


def resolve_kernel(kernel, *, gamma=None, n_features=None, X=None, **kernel_params):
    """Turn an estimator's ``kernel=`` argument into a :class:`Kernel`.

    Parameters
    ----------
    kernel : str or Kernel
        One of :data:`KERNEL_NAMES` or a kernel object on vectors (returned unchanged).
    gamma : float, "scale" or None
        γ for "rbf", "laplacian" and "polynomial"; None means 1 / n_features as in scikit-learn's
        ``KernelRidge`` and ``Nystroem``, and "scale" means 1 / (n_features · Var X), the
        variance of all the entries of the training data, as in its ``SVC`` and
        ``RBFSampler`` (1 where that variance is 0).
    n_features : int >= 1 or None
        Input dimension, used for the default γ.
    X : array-like or None
        The training data, read only for ``gamma="scale"``.
    **kernel_params
        Further parameters of the named kernel (``nu``, ``length_scale``, ``degree``,
        ``coef0``, ``A``).

    Examples
    --------
    >>> from kernelcourse.kernels import resolve_kernel
    >>> print(resolve_kernel("rbf", gamma=None, n_features=4))
    RBF(gamma=0.25)
    """
    if isinstance(kernel, Kernel):
        check_vector_kernel(kernel)
        if gamma is not None or kernel_params:
            raise ValueError(
                "gamma and kernel parameters must be set on the kernel object itself when "
                f"kernel is a Kernel ({kernel!r})."
            )
        return kernel
    if not isinstance(kernel, str) or kernel.lower() not in KERNEL_NAMES + ("poly", "gaussian"):
        raise ValueError(f"kernel must be a Kernel or one of {KERNEL_NAMES}, got {kernel!r}.")
    name = {"poly": "polynomial", "gaussian": "rbf"}.get(kernel.lower(), kernel.lower())
    if n_features is not None:
        n_features = check_count(n_features, "n_features")
    if name in ("rbf", "laplacian", "polynomial"):
        gamma = resolve_gamma(gamma, n_features, X)
    try:
        if name == "rbf":
            return RBF(gamma, **kernel_params)
        if name == "laplacian":
            return Laplacian(gamma, **kernel_params)
        if name == "polynomial":
            return Polynomial(gamma=gamma, **kernel_params)
        if gamma is not None:
            raise ValueError(f"gamma does not apply to the {name!r} kernel; leave it as None.")
        if name == "matern":
            return Matern(**kernel_params)
        if name == "linear":
            return Linear(**kernel_params)
        return Cosine(**kernel_params)
    except TypeError as err:
        if not kernel_params:  # the error is about gamma, and already names it
            raise
        raise ValueError(
            f"bad kernel parameters {sorted(kernel_params)} for {name!r}: {err}"
        ) from err
