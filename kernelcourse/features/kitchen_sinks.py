r"""Random kitchen sinks: random bases ψ(x; w) and linear fits on them (Rahimi & Recht 2008).

Pick a parametric family :math:`\psi(x; w)`, a distribution ρ over w and an integer q; draw
:math:`W_1, \dots, W_q \sim \rho` and fit a linear model on the features
:math:`(\psi(x; W_1), \dots, \psi(x; W_q))` (Rahimi & Recht 2008). The families here:

* ``"cosine"``: :math:`\cos(w^T x + b)`, :math:`w \sim N(0, \sigma^2 I)`,
  :math:`b \sim U(-\pi, \pi)`; :math:`\mathbf E[\psi(x)\psi(y)] = \tfrac12 e^{-\sigma^2
  \|x - y\|^2 / 2}` (Bochner's theorem);
* ``"bump"``: :math:`1\{\|x - w\| \le h\}`, centres w uniform on the training data's bounding
  box widened by h;
* ``"arccos"`` (``"relu"`` for order 1): :math:`\sqrt2\,\Theta(w^T x)\,(w^T x)^n`,
  :math:`w \sim N(0, I)`, whose mean product is the arc-cosine kernel of Cho & Saul (2009),
  :class:`ArcCosine` — the general :math:`K(x, y) = \int \varphi(\omega, x)\varphi(\omega, y)
  \, d\mu(\omega)` (Bach, 2017) with a closed form to compare against;
* any callable ``basis(X, W)`` with a ``sampler(q, X, rng)`` for the parameters.

:func:`fit_box_constrained` solves the constrained ERM of Rahimi & Recht (2008),
:math:`\min_{|\beta_i| \le C/q} \frac1n \sum_i L(y_i, \beta^T\psi(x_i))`.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._threads import single_blas_thread
from .._validation import (
    all_finite,
    as_float_matrix,
    as_float_vector,
    check_bool,
    check_count,
    check_memory,
    check_positive,
    find_stack_level,
    naming,
    no_phase_warning,
    real_constraint,
    validate_data,
    warn_if_phase_lost,
)
from ..kernels import Kernel, _refine_near_pairs, _unit_rows_and_norms, distances

__all__ = ["ArcCosine", "RandomKitchenSinks", "fit_box_constrained", "BASES"]

BASES = ("cosine", "bump", "arccos", "relu")


class ArcCosine(Kernel):
    r"""Arc-cosine kernel of order n (Cho & Saul 2009).

    .. math:: K_n(x, y) = \frac1\pi \|x\|^n \|y\|^n J_n(\theta), \qquad
              \theta = \arccos\frac{x^T y}{\|x\|\|y\|},

    with :math:`J_0 = \pi - \theta`, :math:`J_1 = \sin\theta + (\pi - \theta)\cos\theta`,
    :math:`J_2 = 3\sin\theta\cos\theta + (\pi - \theta)(1 + 2\cos^2\theta)`. It equals
    :math:`2\,\mathbf E_{w \sim N(0, I)}[\Theta(w^Tx)\Theta(w^Ty)(w^Tx)^n(w^Ty)^n]`: an infinite
    network of step (n = 0), ReLU (n = 1) or squared-ReLU (n = 2) units. With
    :math:`\Theta(0) = 0`, as in the features, :math:`K_n(x, 0) = 0` for every n.

    Parameters
    ----------
    order : {0, 1, 2}

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import ArcCosine
    >>> x = np.array([[1.0, 0.0]])
    >>> print(np.round(ArcCosine(order=1)(x, np.array([[0.0, 1.0]])), 4))
    [[0.3183]]
    """

    def __init__(self, order=1):
        # a scalar first: an array's `in` asked for its truth value ("ambiguous")
        if isinstance(order, bool) or not isinstance(order, numbers.Real) or order not in (0, 1, 2):
            raise ValueError(f"order must be 0, 1 or 2, got {order!r}.")
        self.order = int(order)

    def _params(self):
        return {"order": self.order}

    def _gram(self, X, Y):
        symmetric = Y is None
        Y = X if Y is None else Y
        # angles from unit rows (scaled before squaring: no overflow at 1e200, no underflow)
        Ux, nx = _unit_rows_and_norms(X)
        Uy, ny = _unit_rows_and_norms(Y)
        with np.errstate(over="ignore"):
            denom = np.outer(nx, ny)
        # a zero row, by its norm: ‖x‖‖y‖ underflows to 0 for rows of 1e-200, whose angle
        # K₀ still needs (it took cos θ = 1 there, K₀ = 1 whatever the angle)
        zero = (nx == 0)[:, None] | (ny == 0)[None, :]
        cos = np.where(zero, 1.0, Ux @ Uy.T)
        cos = np.clip(cos, -1.0, 1.0)
        if symmetric:
            np.fill_diagonal(cos, 1.0)  # θ(x, x) = 0 exactly, whatever the round-off
        theta = np.arccos(cos)
        sin = np.sqrt(1.0 - cos**2)
        if self.order == 0:
            J = math.pi - _near_axis_angles(theta, cos, Ux, Uy)
            # Θ(wᵀ0) = 0: a zero row has the zero feature, K(x, 0) = 0 (1 was not PSD)
            J[zero] = 0.0
        elif self.order == 1:
            J = sin + (math.pi - theta) * cos
        else:
            J = 3 * sin * cos + (math.pi - theta) * (1 + 2 * cos**2)
        if self.order == 0:
            return (J / math.pi).astype(X.dtype, copy=False)
        with np.errstate(over="ignore", invalid="ignore"):
            return (denom**self.order * J / math.pi).astype(X.dtype, copy=False)

    def _diag(self, X):
        # θ = 0 gives J_0 = J_1 = π and J_2 = 3π, so K(x, x) = c_n ‖x‖^{2n}.
        c = {0: 1.0, 1: 1.0, 2: 3.0}[self.order]
        if self.order == 0:  # K(0, 0) = 0, as in _gram (‖x‖² underflows for x of 1e-200)
            return np.where((X != 0).any(axis=1), c, 0.0).astype(X.dtype, copy=False)
        return c * np.einsum("ij,ij->i", X, X) ** self.order


def _near_axis_angles(theta, cos, Ux, Uy):
    """``theta`` = arccos(``cos``) for the unit rows ``Ux``, ``Uy``, recomputed where x and y
    are nearly parallel or antiparallel as θ = 2 atan2(‖u − v‖, ‖u + v‖) from the differences.
    There arccos has an infinite slope: a cosine rounded by ε gives θ ~ √ε, and
    J₀ = π − θ, whose slope stays 1, made K₀(x, 2x) = 1 − 5e-9 instead of 1 (J₁ and J₂ are
    flat there, and keep ε)."""
    eps = float(np.finfo(cos.dtype).eps)
    limit = 1e6 * eps  # θ or π − θ below 1000 √ε; beyond, arccos's error ε/θ is below √ε/1000
    chord = np.clip(2.0 - 2.0 * cos, 0.0, None)
    span = np.clip(2.0 + 2.0 * cos, 0.0, None)
    near = (chord <= limit) | (span <= limit)
    if not near.any():
        return theta
    _refine_near_pairs(chord, Ux, Uy, 1.0, limit)
    _refine_near_pairs(span, Ux, -Uy, 1.0, limit)
    theta = theta.copy()
    theta[near] = 2.0 * np.arctan2(np.sqrt(chord[near]), np.sqrt(span[near]))
    return theta


class RandomKitchenSinks(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random features :math:`(\psi(x; W_1), \dots, \psi(x; W_q))`, :math:`W_j \sim \rho`
    (Rahimi & Recht 2008, "random kitchen sinks"; :doc:`chapter 7 </book/07_random_kitchen_sinks>`).

    The output is the raw basis, as in :doc:`chapter 7 </book/07_random_kitchen_sinks>`; divide
    inner products by q to estimate the kernel :math:`\mathbf E_w[\psi(x; w)\psi(y; w)]`
    (:meth:`approximate_kernel`).

    Parameters
    ----------
    basis : {"cosine", "bump", "arccos", "relu"} or callable, default="cosine"
        The family ψ(x; w); a callable ``basis(X, W) -> (n, q) array`` needs ``sampler``.
    n_components : int >= 1, default=100
        Number q of random basis functions.
    scale : float > 0, default=1.0
        σ, the standard deviation of w for ``"cosine"``.
    bandwidth : float > 0, default=1.0
        Radius h of the bumps.
    order : {0, 1, 2}, default=1
        Order n of the arc-cosine features (``"relu"`` forces 1).
    sampler : callable or None, default=None
        ``sampler(q, X, rng) -> W`` drawing the parameters of a callable basis (it may look
        at the training data X, as the bump sampler does).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    weights_ : ndarray
        The drawn parameters: rows :math:`W_j` (frequencies, bump centres or ReLU weights).
    offset_ : ndarray of shape (q,) or None
        Phases b for ``"cosine"``.
    n_features_in_ : int

    See Also
    --------
    kernelcourse.features.fit_box_constrained
        The constrained fit of weighted sums of these features.
    kernelcourse.features.RandomFourierFeatures
        The cosine basis drawn from a kernel's spectral measure.

    References
    ----------
    Rahimi & Recht (2008), "Weighted sums of random kitchen sinks"; Cho & Saul (2009),
    "Kernel methods for deep learning", NIPS 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomKitchenSinks
    >>> X = np.random.default_rng(0).normal(size=(50, 4))
    >>> Psi = RandomKitchenSinks(basis="relu", n_components=64, random_state=0).fit_transform(X)
    >>> print(Psi.shape, bool((Psi >= 0).all()))
    (50, 64) True
    """

    _parameter_constraints: dict = {
        "basis": [StrOptions(set(BASES)), callable],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "scale": [real_constraint(0, None, closed="neither")],
        "bandwidth": [real_constraint(0, None, closed="neither")],
        "order": [Interval(numbers.Integral, 0, 2, closed="both")],
        "sampler": [callable, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        basis="cosine",
        n_components=100,
        scale=1.0,
        bandwidth=1.0,
        order=1,
        sampler=None,
        random_state=None,
    ):
        self.basis = basis
        self.n_components = n_components
        self.scale = scale
        self.bandwidth = bandwidth
        self.order = order
        self.sampler = sampler
        self.random_state = random_state

    def fit(self, X, y=None):
        """Draw :math:`W_1, \\dots, W_q` from ρ.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If ``scale`` times a drawn N(0, 1) value overflows (``"cosine"``).
        """
        self._validate_params()
        check_count(self.order, "order", minimum=0)  # True is not order 1, as in ArcCosine
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        rng = check_random_state(self.random_state)
        q, d = check_count(self.n_components, "n_components"), X.shape[1]
        # the q × d parameters (n_components=10**20 was numpy's "maximum dimension exceeded")
        check_memory(
            8 * q * (d + 1),
            f"random kitchen sinks with n_components={q} on {d} features",
            "lower n_components",
        )
        self.offset_ = None
        if callable(self.basis):
            if self.sampler is None:
                raise ValueError(
                    "a callable basis needs sampler(q, X, rng) to draw its parameters."
                )
            self.weights_ = np.asarray(self.sampler(q, X, rng))
            if self.weights_.ndim == 0:  # len() of a scalar was "unsized object"
                raise ValueError(
                    f"sampler returned a scalar ({self.weights_!r}); it must return q = {q} "
                    "parameters, an array with one row per basis function."
                )
            if len(self.weights_) != q:
                raise ValueError(f"sampler returned {len(self.weights_)} parameters, expected {q}.")
            # try the basis on some training rows now rather than let NaN reach a model later
            self._basis_values(X[:256])
        elif self.basis == "cosine":
            with np.errstate(over="ignore"):
                self.weights_ = self.scale * rng.normal(size=(q, d))
            if not np.isfinite(self.weights_).all():
                raise ValueError(
                    f"scale={self.scale!r} times the drawn N(0, 1) values overflows floating "
                    "point (infinite frequencies w); choose a smaller scale."
                )
            self.offset_ = rng.uniform(-math.pi, math.pi, size=q)
        elif self.basis == "bump":
            h = self.bandwidth
            with np.errstate(over="ignore"):  # the error below names the cause
                lo, hi = X.min(axis=0) - h, X.max(axis=0) + h
                width = hi - lo
            if not np.isfinite(width).all():
                # numpy's uniform raised "OverflowError: Range exceeds valid bounds"
                raise ValueError(
                    f"the box [min(X) − h, max(X) + h] of the bump centres overflows floating "
                    f"point (bandwidth h={h!r}, largest |entry| of X "
                    f"{float(np.abs(X).max()):.3g}); lower bandwidth or rescale X."
                )
            self.weights_ = rng.uniform(lo, hi, size=(q, d))
        else:
            self.weights_ = rng.normal(size=(q, d))
        self._n_features_out = q
        return self

    def _basis_values(self, X):
        name = getattr(self.basis, "__name__", repr(self.basis))
        Psi = np.asarray(self.basis(X, self.weights_))
        if Psi.dtype.kind not in "biuf":
            raise TypeError(f"basis {name} returned dtype {Psi.dtype}; it must return reals.")
        Psi = Psi.astype(X.dtype, copy=False)
        if Psi.shape != (len(X), self.n_components):
            raise ValueError(
                f"basis {name} returned shape {Psi.shape}, expected {(len(X), self.n_components)}."
            )
        if not np.isfinite(Psi).all():
            raise ValueError(
                f"basis {name} returned NaN or infinity on X (e.g. at row "
                f"{int(np.argmin(np.isfinite(Psi).all(axis=1)))}); ψ(x; w) must be finite."
            )
        return Psi

    @property
    def _order(self):
        return 1 if self.basis == "relu" else int(self.order)

    def transform(self, X):
        r"""ψ(X), shape (n_samples, q), in the dtype of X (float32 kept).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Psi : ndarray of shape (n_samples, n_components)

        Raises
        ------
        ValueError
            If the projections :math:`w^T x` (plus b) or the features
            :math:`\sqrt2\,(w^T x)^n` overflow
            floating point: X (or, for ``"cosine"``, ``scale``) is too large in magnitude
            (cos(∞) would be NaN, a ReLU of ∞ infinite).

        Warns
        -----
        RuntimeWarning
            For ``"cosine"``, if the arguments :math:`w^T x + b` are so large that the dtype cannot
            resolve their phase (neighbouring floats more than π apart): the features would
            be rounding noise.
        """
        out, big, warn = self._transform_unwarned(X)
        warn(big)  # at the user's line, past scikit-learn's wrappers
        return out

    def _transform_unwarned(self, X):
        """:meth:`transform` with the lost-phase warning of the cosine basis left to the
        caller, as :meth:`RandomFourierFeatures._transform_unwarned
        <kernelcourse.features.RandomFourierFeatures>`: returns ψ(X), the largest
        argument :math:`|w^T x + b|` (0.0 for the other bases) and ``warn``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        if callable(self.basis):
            return self._basis_values(X), 0.0, no_phase_warning
        with np.errstate(over="ignore"):  # parameters beyond float32: see below
            W = self.weights_.astype(X.dtype)
        if self.basis == "bump":
            if not all_finite(W):
                # centres beyond float32's range (a float64 fit): compare in float64,
                # where they are finite, rather than against infinity
                W = self.weights_
                Psi = (distances(X.astype(W.dtype), W) <= self.bandwidth).astype(X.dtype)
                return Psi, 0.0, no_phase_warning
            # ‖x − w‖ ≤ h, from the expansion on centred (and, if huge, scaled) rows
            return (distances(X, W) <= self.bandwidth).astype(X.dtype), 0.0, no_phase_warning
        with np.errstate(over="ignore", invalid="ignore"):
            P = X @ W.T
            if self.basis == "cosine":
                P += self.offset_.astype(X.dtype)
        self._check_finite(P, X, "projections w^T x")
        if self.basis == "cosine":
            big = max(float(P.max()), -float(P.min())) if P.size else 0.0  # no |P| copy
            warn = functools.partial(
                warn_if_phase_lost, dtype=P.dtype, advice=f"lower scale={self.scale!r}"
            )
            return np.cos(P, out=P), big, warn
        n = self._order
        with np.errstate(over="ignore"):
            Psi = np.where(P > 0, P**n if n else 1.0, 0.0)
            Psi = (math.sqrt(2.0) * Psi).astype(X.dtype, copy=False)
        if n > 0:  # √2 (w^T x)^n may overflow where w^T x does not
            self._check_finite(Psi, X, f"features √2 (w^T x)^{n}")
        return Psi, 0.0, no_phase_warning

    def _check_finite(self, P, X, what):
        if all_finite(P):
            return
        fix = "rescale X (e.g. StandardScaler)"
        if self.basis == "cosine":
            fix += f" or lower scale={self.scale!r}"
        raise ValueError(
            f"the {what} of the {self.basis!r} basis on X (largest |entry| "
            f"{float(np.abs(X).max()):.3g}) overflow floating point (NaN or infinity): X is "
            f"too large in magnitude for these features; {fix}."
        )

    def approximate_kernel(self, X, Y=None):
        r""":math:`\frac1q \sum_j \psi(x; W_j)\psi(y; W_j)`, the Monte Carlo estimate of
        :math:`\mathbf E_w[\psi(x; w)\psi(y; w)]` (for ``"arccos"`` the arc-cosine kernel,
        for ``"cosine"`` half the Gaussian kernel :math:`e^{-\sigma^2\|x-y\|^2/2}`)."""
        A = self.transform(X)
        B = A if Y is None else naming("Y", self.transform, Y)
        with np.errstate(over="ignore", invalid="ignore"):  # the error below says why
            K = A @ B.T / self.n_components
        if not all_finite(K):
            # finite features whose products overflow (ReLU features of |x| ~ 1e160)
            raise ValueError(
                f"the kernel estimate ψ(X)ψ(Y)ᵀ/q of the {self.basis!r} basis overflows "
                f"{K.dtype} (largest |feature| {float(max(np.abs(A).max(), np.abs(B).max())):.3g}"
                "); rescale X (e.g. StandardScaler)."
            )
        return K

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _log1pexp(z):
    return np.logaddexp(0.0, z)


def fit_box_constrained(Psi, y, C, *, loss="logistic", intercept=True, tol=1e-6, max_iter=2000):
    r"""Constrained ERM over linear models on random features (Rahimi & Recht 2008;
    :doc:`chapter 7 </book/07_random_kitchen_sinks>`):

    .. math:: \hat\beta = \arg\min_{\max_i |\beta_i| \le C/q}
              \frac1n \sum_{i=1}^n L(y_i, \beta^T \psi(x_i) + \beta_0),

    solved by L-BFGS-B with box bounds (the intercept :math:`\beta_0` is free).

    Parameters
    ----------
    Psi : array of shape (n, q)
        Random features ψ(x_i).
    y : array of shape (n,)
        Labels in {0, 1} or {−1, +1} for ``"logistic"``, both classes present unless
        ``intercept=False`` with a finite C (with one class the loss has no minimum); real
        targets for ``"squared"``.
    C : float > 0
        Bound on q·max|βᵢ|; ``numpy.inf`` removes the constraint.
    loss : {"logistic", "squared"}
    intercept : bool
    tol : float > 0
        Tolerance on the projected gradient of L-BFGS-B.
    max_iter : int >= 1
        Iteration limit; a warning names the final gradient if it is reached.

    Returns
    -------
    beta : ndarray of shape (q,)
    beta0 : float

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomKitchenSinks, fit_box_constrained
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    >>> Psi = RandomKitchenSinks(n_components=100, random_state=0).fit_transform(X)
    >>> beta, beta0 = fit_box_constrained(Psi, y, C=1.0)
    >>> print(beta.shape, bool(np.abs(beta).max() <= 1.0 / 100 + 1e-12))
    (100,) True
    """
    Psi = as_float_matrix(Psi, "Psi", allow_float32=False)
    y = as_float_vector(y, "y", len(Psi))
    if isinstance(C, bool) or not isinstance(C, numbers.Real) or not C > 0:
        raise ValueError(f"C must be a number > 0 (numpy.inf for no constraint), got {C!r}.")
    try:
        float(C)
    except OverflowError:  # C / q raised Python's "integer division result too large"
        raise ValueError(
            "C must be a number > 0 (numpy.inf for no constraint), got an integer beyond the "
            "float range (about 1.8e308); pass numpy.inf for no constraint."
        ) from None
    tol = check_positive(tol, "tol")
    max_iter = check_count(max_iter, "max_iter")
    intercept = check_bool(intercept, "intercept")
    n, q = Psi.shape
    if loss == "logistic":
        labels = np.unique(y)
        if not set(labels) <= {0.0, 1.0} and not set(labels) <= {-1.0, 1.0}:
            raise ValueError(f"logistic loss needs labels in {{0, 1}} or {{-1, 1}}, got {labels}.")
        if len(labels) < 2 and (intercept or C == np.inf):
            # one class: the free intercept (or an unbounded β) drives the loss to its
            # infimum 0, never attained; L-BFGS-B stopped at some large β₀ and called it a fit
            raise ValueError(
                f"logistic loss needs both classes in y, got only {labels}; with one class "
                "the minimum is not attained (β₀ → ±∞)."
            )
        s = np.where(y > 0, 1.0, -1.0)
    elif loss != "squared":
        raise ValueError(f"loss must be 'logistic' or 'squared', got {loss!r}.")

    def objective(theta):
        beta, b0 = theta[:q], (theta[q] if intercept else 0.0)
        f = Psi @ beta + b0
        if loss == "logistic":
            m = s * f
            value = _log1pexp(-m).mean()
            g = -s * np.exp(-_log1pexp(m)) / n  # d/df log(1 + e^{-sf}) = −s σ(−sf)
        else:
            r = f - y
            value = 0.5 * np.mean(r**2)
            g = r / n
        grad = np.empty_like(theta)
        grad[:q] = Psi.T @ g
        if intercept:
            grad[q] = g.sum()
        return value, grad

    bound = C / q
    bounds = [(-bound, bound)] * q + ([(None, None)] if intercept else [])
    bounds = [(None if lo == -np.inf else lo, None if hi == np.inf else hi) for lo, hi in bounds]
    theta0 = np.zeros(q + int(intercept))
    # Hundreds of cheap matrix-vector products: BLAS threads only add synchronisation cost.
    # numpy's overflow warnings at the line search's trial points are silenced: a result
    # that is not finite raises below, naming Psi and y
    with single_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        res = minimize(
            objective,
            theta0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-12},
        )
    if not (np.isfinite(res.fun) and np.isfinite(res.jac).all()):
        # L-BFGS-B stops at once on an objective or gradient of NaN or infinity and hands
        # back the starting point β = 0, which looked like a fit
        raise ValueError(
            f"the objective or its gradient overflows floating point (largest |entry| of Psi "
            f"{float(np.abs(Psi).max()):.3g}, of y {float(np.abs(y).max()):.3g}); rescale Psi "
            "or y."
        )
    if not res.success and res.nit == 0:
        warnings.warn(
            f"fit_box_constrained took no step: the line search failed at β = 0 (projected "
            f"gradient norm {np.abs(res.jac).max():.3g}), and β = 0 is returned. The problem is "
            f"badly scaled (largest |entry| of Psi {float(np.abs(Psi).max()):.3g}); rescale Psi.",
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )
    elif not res.success and res.nit >= max_iter:
        warnings.warn(
            f"fit_box_constrained stopped after max_iter={max_iter} iterations with projected "
            f"gradient norm {np.abs(res.jac).max():.3g} > tol={tol:g}; raise max_iter.",
            RuntimeWarning,
            stacklevel=find_stack_level(),
        )
    return res.x[:q], float(res.x[q]) if intercept else 0.0
