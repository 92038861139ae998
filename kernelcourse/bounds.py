"""Concentration and generalization bounds, as functions to compare against experiments.

Chapters 4 and 6 set them against measured errors.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ._validation import as_float_matrix, check_nonnegative, check_positive, find_stack_level

__all__ = [
    "rademacher_bound",
    "hoeffding_bound",
    "hoeffding_deviation",
    "hoeffding_features",
    "uniform_bound",
    "features_needed",
    "uniform_deviation",
    "TheoremRangeWarning",
]


class TheoremRangeWarning(UserWarning):
    r"""A bound was evaluated outside the range where its theorem holds, such as the
    Rahimi–Recht bound at :math:`\epsilon > \sigma_p d_{\mathcal X}`: the value is the
    formula's, and the theorem says nothing about it."""


def rademacher_bound(K, c):
    r"""Rademacher complexity bound :math:`c\sqrt{\operatorname{tr}(\mathbf K)}/n`
    (Bartlett and Mendelson, 2002; chapter 4).

    For the kernel machines :math:`\{x \mapsto \sum_i \alpha_i K(x, x_i) : \|\beta\|_{\mathcal H}
    \le c\}` the empirical Rademacher complexity on n points with Gram matrix K is at most this.

    Parameters
    ----------
    K : array of shape (n, n)
        Gram matrix on the sample.
    c : float >= 0
        Bound on the RKHS norm :math:`\|\beta\|_{\mathcal H} = \sqrt{\alpha^T K \alpha}`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.bounds import rademacher_bound
    >>> from kernelcourse.kernels import RBF
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> print(round(rademacher_bound(RBF(gamma=1.0)(X), c=1.0), 4))
    0.1
    """
    K = as_float_matrix(K, "K", allow_float32=False)
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square Gram matrix, got shape {K.shape}.")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(K).max()))):
        raise ValueError("K must be symmetric, as every Gram matrix is.")
    c = check_nonnegative(c, "c")
    diag = np.diagonal(K)
    top = float(np.abs(diag).max(initial=0.0))
    # K_ii = K(x_i, x_i) = ‖φ(x_i)‖² >= 0; a trace that is positive overall hid diag(1, −0.5)
    if diag.min() < -1e-10 * top:
        raise ValueError(
            f"K has a negative diagonal entry K_ii = {float(diag.min()):.3g}; the diagonal "
            "K(x_i, x_i) of a Gram matrix is >= 0, so K is not one."
        )
    # √tr K as √top · √(tr K / top): the trace of a K of 1e308 overflows, its root does not
    trace = float((diag / top).sum()) if top > 0 else 0.0
    if trace < 0:
        raise ValueError(f"K has negative trace {trace * top:.3g}; it is not a Gram matrix.")
    # c last: c·√top alone may overflow where the bound does not
    bound = c * (math.sqrt(top) * math.sqrt(trace) / K.shape[0])
    if not math.isfinite(bound):
        raise ValueError(f"the bound with c = {c:g} is beyond the float range; use a smaller c.")
    return bound


def _check_probability(delta, name="delta"):
    delta = check_positive(delta, name)
    if delta >= 1:
        raise ValueError(f"{name} must lie in (0, 1), got {delta!r}.")
    return delta


_FLOAT_MAX = float(np.finfo(np.float64).max)


def _check_count(D, name="D", integer=False):
    if isinstance(D, np.ndarray) and D.ndim == 0 and D.dtype.kind in "iuf":
        D = D.item()  # a 0-d array counts as its number, as in check_positive
    if isinstance(D, bool) or not isinstance(D, numbers.Real) or not 1 <= D < math.inf:
        what = "an integer" if integer else "a finite number"
        raise ValueError(f"{name} must be {what} >= 1, got {D!r}.")
    if integer and D != math.floor(D):
        raise ValueError(f"{name} must be an integer >= 1 (a dimension), got {D!r}.")
    # an integer such as 10**400: float(D) would raise OverflowError (asked of integers only:
    # np.float32(D) > _FLOAT_MAX casts the bound to float32 and warns of an overflow)
    if isinstance(D, numbers.Integral) and D > _FLOAT_MAX:
        raise ValueError(f"{name} must be a finite number, got one beyond the float range.")
    return float(D)


# Hoeffding's exponent 2Da²/(M − m)² as D a² / c: the random-phase terms
# 2cos(ωᵀx + b)cos(ωᵀy + b) lie in [−2, 2] (c = 8); the cos/sin map averages
# cos(ωᵀ(x − y)) ∈ [−1, 1] over its D frequencies (c = 2).
_HOEFFDING_C = {"cos": 8.0, "cossin": 2.0}


def _hoeffding_c(map):
    # a list or dict is not a key (``in`` raised "unhashable type: 'list'")
    if not isinstance(map, str) or map not in _HOEFFDING_C:
        raise ValueError(f"map must be one of {sorted(_HOEFFDING_C)}, got {map!r}.")
    return _HOEFFDING_C[map]


def _log_two_over(delta):
    """ln(2/δ); as ln 2 − ln δ where 2/δ overflows to infinity (δ below 1.1e-308), which
    made the deviation infinite and blamed a for the D needed."""
    ratio = 2.0 / delta
    return math.log(ratio) if ratio < math.inf else math.log(2.0) - math.log(delta)


def hoeffding_bound(D, a, *, map="cos"):
    r"""Hoeffding's bound for random Fourier features at one pair (x, y) (Hoeffding, 1963;
    :doc:`chapter 6 </book/06_approximation_quality>`).

    For ``map="cos"``, ψ(x)ᵀψ(y) is the mean of D independent terms
    :math:`2\cos(\omega_i^T x + b_i)\cos(\omega_i^T y + b_i) \in [-2, 2]` with mean
    K(x, y), so

    .. math:: P(|K(x, y) - \psi(x)^T\psi(y)| \ge a) \le 2\exp(-D a^2 / 8).

    For ``map="cossin"`` with D frequencies (2D features) it is the mean of
    :math:`\cos(\omega_i^T(x - y)) \in [-1, 1]` and the bound is :math:`2\exp(-Da^2/2)`.

    Parameters
    ----------
    D : number >= 1
        Number of features (``"cos"``) or of frequencies (``"cossin"``).
    a : float > 0
        Deviation.
    map : {"cos", "cossin"}, default="cos"
        The feature map, as in :class:`kernelcourse.features.RandomFourierFeatures`.

    Returns
    -------
    float
        The bound (it exceeds 1, and says nothing, when D a² < c ln 2).

    Examples
    --------
    >>> from kernelcourse.bounds import hoeffding_bound
    >>> print(round(hoeffding_bound(D=1000, a=0.1), 4))
    0.573
    """
    c = _hoeffding_c(map)
    D, a = _check_count(D), check_positive(a, "a")
    return 2.0 * math.exp(-D * a * a / c)


def hoeffding_deviation(D, delta, *, map="cos"):
    r"""The deviation a at which :func:`hoeffding_bound` equals δ: with probability at
    least 1 − δ, :math:`|K(x, y) - \psi(x)^T\psi(y)| < \sqrt{c\ln(2/\delta)/D}` with
    c = 8 for ``map="cos"`` and c = 2 for ``map="cossin"``.

    Examples
    --------
    >>> from kernelcourse.bounds import hoeffding_deviation
    >>> print(round(hoeffding_deviation(D=1000, delta=0.05), 4))
    0.1718
    """
    c = _hoeffding_c(map)
    D, delta = _check_count(D), _check_probability(delta)
    return math.sqrt(c * _log_two_over(delta) / D)


def hoeffding_features(a, delta, *, map="cos"):
    r"""The smallest D with :func:`hoeffding_bound` at most δ, i.e.
    :math:`D = \lceil c\ln(2/\delta)/a^2 \rceil` (c = 8 for ``"cos"``, 2 for
    ``"cossin"``, where D counts frequencies).

    Examples
    --------
    >>> from kernelcourse.bounds import hoeffding_features
    >>> print(hoeffding_features(a=0.1, delta=0.05))
    2952
    """
    c = _hoeffding_c(map)
    a, delta = check_positive(a, "a"), _check_probability(delta)
    D = c * _log_two_over(delta) / a / a  # a·a would underflow to 0 for a below 1e-154
    if not math.isfinite(D):
        raise ValueError(f"a = {a:g} is too small: the D it needs is beyond floating point.")
    return max(1, math.ceil(D))


def _log_prefactor(sigma_p, diameter, eps):
    """ln (2⁵ σ_p d_X / ε)², the prefactor of the uniform bound, taken in logarithms: σ_p d_X
    of 1e150 squares past the float range although the bound itself may be tiny."""
    return 2.0 * (math.log(32.0) + math.log(sigma_p) + math.log(diameter) - math.log(eps))


def _uniform_bound(D, eps, d, diameter, sigma_p):
    """:func:`uniform_bound` on checked arguments, at any ε (no range check)."""
    log_bound = _log_prefactor(sigma_p, diameter, eps) - D * eps * eps / (4.0 * (d + 2))
    return math.exp(log_bound) if log_bound < 709.0 else math.inf  # vacuous beyond 1 anyway


def _outside_range(eps, diameter, sigma_p):
    """Whether ε > σ_p d_X, the range the uniform bound's proof needs (in logarithms: the
    product may overflow or underflow where the comparison is clear)."""
    return math.log(eps) > math.log(sigma_p) + math.log(diameter)


def _range_message(eps, diameter, sigma_p):
    product = sigma_p * diameter  # (Python floats: inf or 0 where out of range)
    shown = f"{product:.3g}" if 0 < product < math.inf else f"{sigma_p:.3g} * {diameter:.3g}"
    return (
        f"eps = {eps:.3g} exceeds sigma_p * diameter = {shown}, outside the range of the "
        "Rahimi-Recht theorem (eps <= sigma_p * diameter)"
    )


def _frequencies_for(eps, delta, d, diameter, sigma_p):
    """The D, as a float, at which :func:`uniform_bound` at ``eps`` equals δ (infinite or
    NaN where it is beyond floating point): :func:`features_needed` before rounding up."""
    log_term = _log_prefactor(sigma_p, diameter, eps) - math.log(delta)
    return 4.0 * (d + 2) / eps / eps * log_term  # eps**2 would underflow to 0 below 1e-154


def uniform_bound(D, eps, d, diameter, sigma_p):
    r"""Rahimi–Recht uniform bound over a compact set (Rahimi and Recht, 2007, claim 1;
    :doc:`chapter 6 </book/06_approximation_quality>`).

    It holds for the cos/sin map ψ(x) = [cos(Ωx); sin(Ωx)]/√D with D frequencies
    (``RandomFourierFeatures(map="cossin", n_components=2 * D)``), whose estimate depends on
    x − x′ only. For a compact :math:`\mathcal X \subset \mathbb R^d` of diameter
    :math:`d_{\mathcal X}`, with :math:`\sigma_p d_{\mathcal X} \ge \epsilon`, and
    :math:`\sigma_p^2 = \mathbf E_p[\omega^T\omega]`,

    .. math:: P\Big[\sup_{x, x' \in \mathcal X} |\psi(x)^T\psi(x') - K(x, x')| \ge
              \epsilon\Big] \le \Big(\frac{2^5 \sigma_p d_{\mathcal X}}{\epsilon}\Big)^2
              \exp\Big(-\frac{D\epsilon^2}{4(d + 2)}\Big).

    The lectures and the paper write :math:`2^4`; their Lipschitz step takes
    :math:`\mathbf E\nabla s(\Delta^*) = \nabla K(\Delta^*)` at the random maximiser
    :math:`\Delta^*`. Bounding the Lipschitz constant by :math:`\bar{\|\omega\|} +
    \mathbf E\|\omega\|` instead gives :math:`\mathbf E L^2 \le 4\sigma_p^2` and the
    constant :math:`2^5` (chapter 6 proves it).

    Parameters
    ----------
    D : number >= 1
        Number of frequencies.
    eps : float > 0
    d : int >= 1
        Input dimension.
    diameter : float > 0
        :math:`d_{\mathcal X}`.
    sigma_p : float > 0
        Square root of the second moment of the spectral density
        (:meth:`kernelcourse.spectral.SpectralMeasure.second_moment`).

    Returns
    -------
    float
        The bound; ``math.inf`` where its value is beyond the float range (it says nothing
        once above 1).

    Warns
    -----
    TheoremRangeWarning
        If :math:`\epsilon > \sigma_p d_{\mathcal X}`: the proof needs
        :math:`\epsilon \le \sigma_p d_{\mathcal X}`, and the value returned there is the
        formula's, not a bound.

    Examples
    --------
    >>> from kernelcourse.bounds import uniform_bound
    >>> print(f"{uniform_bound(D=10**5, eps=0.1, d=2, diameter=2.0, sigma_p=1.0):.1e}")
    2.9e-22
    """
    D, eps = _check_count(D), check_positive(eps, "eps")
    d = _check_count(d, "d", integer=True)
    diameter, sigma_p = check_positive(diameter, "diameter"), check_positive(sigma_p, "sigma_p")
    if _outside_range(eps, diameter, sigma_p):
        warnings.warn(
            f"{_range_message(eps, diameter, sigma_p)}: the value returned is the formula's, "
            "not a bound on the probability.",
            TheoremRangeWarning,
            stacklevel=find_stack_level(),
        )
    return _uniform_bound(D, eps, d, diameter, sigma_p)


def features_needed(eps, delta, d, diameter, sigma_p):
    r"""The smallest D for which :func:`uniform_bound` is at most δ (Rahimi and Recht, 2007):

    .. math:: D = \Big\lceil \frac{4(d + 2)}{\epsilon^2}
              \ln\frac{(2^5 \sigma_p d_{\mathcal X} / \epsilon)^2}{\delta} \Big\rceil
              = O\Big(\frac{d}{\epsilon^2}\ln\frac{\sigma_p d_{\mathcal X}}{\epsilon}\Big).

    Parameters
    ----------
    eps : float > 0
        The sup error to guarantee, at most :math:`\sigma_p d_{\mathcal X}`.
    delta : float in (0, 1)
        The probability allowed for a larger error.
    d, diameter, sigma_p
        As in :func:`uniform_bound`.

    Returns
    -------
    int
        The number of frequencies D.

    Warns
    -----
    TheoremRangeWarning
        If :math:`\epsilon > \sigma_p d_{\mathcal X}`, outside the theorem's range: the D
        returned makes the formula at most δ, which guarantees nothing there.

    Examples
    --------
    >>> from kernelcourse.bounds import features_needed
    >>> print(features_needed(eps=0.1, delta=0.05, d=2, diameter=2.0, sigma_p=1.0))
    25470
    """
    eps, delta = check_positive(eps, "eps"), _check_probability(delta)
    d = _check_count(d, "d", integer=True)
    diameter, sigma_p = check_positive(diameter, "diameter"), check_positive(sigma_p, "sigma_p")
    if _outside_range(eps, diameter, sigma_p):
        warnings.warn(
            f"{_range_message(eps, diameter, sigma_p)}: the theorem guarantees nothing at "
            "this eps, and the D returned only makes its formula at most delta.",
            TheoremRangeWarning,
            stacklevel=find_stack_level(),
        )
    D = _frequencies_for(eps, delta, d, diameter, sigma_p)
    if not math.isfinite(D):
        # d counts too: d = 1e307 with eps = 0.1 was blamed on eps alone
        raise ValueError(
            f"eps = {eps:g} is too small or d = {d:g} too large: the D it needs, 4(d + 2)/eps² "
            "times a logarithm, is beyond floating point."
        )
    return max(1, math.ceil(D))


def uniform_deviation(D, delta, d, diameter, sigma_p):
    r"""The ε at which :func:`uniform_bound` equals δ for a given D (found by bisection on
    log ε; the bound decreases in ε): with probability at least 1 − δ the sup error over the
    compact set is below this ε, provided :math:`\epsilon \le \sigma_p d_{\mathcal X}`.

    Parameters
    ----------
    D : number >= 1
        Number of frequencies.
    delta : float in (0, 1)
        The probability allowed for a larger error.
    d, diameter, sigma_p
        As in :func:`uniform_bound`.

    Returns
    -------
    float
        The deviation ε.

    Warns
    -----
    TheoremRangeWarning
        If the ε found exceeds :math:`\sigma_p d_{\mathcal X}`, outside the theorem's range:
        the bound then says nothing at this D and δ (it is above δ at every ε in the range).
        The warning names the D from which it does.

    Examples
    --------
    >>> from kernelcourse.bounds import uniform_deviation
    >>> print(round(uniform_deviation(D=10**5, delta=0.05, d=2, diameter=2.0, sigma_p=1.0), 3))
    0.052
    """
    D, delta = _check_count(D), _check_probability(delta)
    d = _check_count(d, "d", integer=True)
    diameter, sigma_p = check_positive(diameter, "diameter"), check_positive(sigma_p, "sigma_p")
    # the root lies where D ε² / (4(d + 2)) is of the order of the log-prefactor: any D and
    # d the checks admit put it inside [1e-300, 1e300] (a fixed [1e-12, 1e12] returned its
    # end for D = 1e30 or d = 1e300)
    lo, hi = 1e-300, 1e300
    at_lo, at_hi = (_uniform_bound(D, e, d, diameter, sigma_p) for e in (lo, hi))
    if not at_lo > delta >= at_hi:
        raise ValueError(
            "the deviation for these arguments is outside [1e-300, 1e300], beyond what "
            "floating point resolves; check D, d, diameter and sigma_p."
        )
    for _ in range(200):
        mid = math.sqrt(lo) * math.sqrt(hi)  # lo · hi underflows to 0 below 1e-308
        if _uniform_bound(D, mid, d, diameter, sigma_p) > delta:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    if _outside_range(hi, diameter, sigma_p):
        # the smallest D whose ε lies in the range: the bound at ε = σ_p d_X equals δ there
        edge = sigma_p * diameter
        needed = _frequencies_for(edge, delta, d, diameter, sigma_p) if edge > 0 else math.inf
        more = (
            f" (its eps lies in the range from D = {math.ceil(needed):,})"
            if math.isfinite(needed)
            else ""
        )
        warnings.warn(
            f"{_range_message(hi, diameter, sigma_p)}: the bound says nothing at D = {D:g} "
            f"and delta = {delta:g}{more}.",
            TheoremRangeWarning,
            stacklevel=find_stack_level(),
        )
    return hi
