r"""Six ways to train a kernel model with SGD (:doc:`chapter 3 </book/03_kernel_trick_six_ways>`).

The model is linear in a feature map, :math:`h(x) = w^T\phi(x)`, trained by SGD on the squared
loss :math:`L(\hat y; y) = \frac12(\hat y - y)^2`, so :math:`L'(\hat y; y) = \hat y - y` and

.. math::  w_{t+1} = w_t - \alpha_t\, L'(w_t^T\phi(x_{i_t}); y_{i_t})\, \phi(x_{i_t}).

Starting from :math:`w_0 = 0` every iterate lies in :math:`\mathrm{span}\{\phi(x_i)\}`:
:math:`w_t = \sum_i u_{i,t}\phi(x_i)`, and the same step written on the coefficients is

.. math::  u_{i_t,t+1} = u_{i_t,t} - \alpha_t\, L'\Big(\sum_j u_{j,t} K(x_j, x_{i_t}); y_{i_t}\Big).

The strategies compute the same iterates in different ways:

==  ===========================================  =========================  ===================
#   strategy                                     time                       memory
==  ===========================================  =========================  ===================
①   features on the fly, SGD on w                Θ(T d D)                   Θ(n d + D)
②   cached features z_i = φ(x_i), SGD on w       Θ(n d D + T D)             Θ(n D)
③   SGD on u, kernel values on the fly           Θ(T n d)                   Θ(n d)
④   SGD on u, Gram matrix cached                 Θ(n² d + T n)              Θ(n²)
⑤   approximate features ψ on the fly            Θ(T d D)                   Θ(n d + d D)
⑥   approximate features ψ(x_i) cached           Θ(n d D + T D)             Θ(n D + d D)
==  ===========================================  =========================  ===================

with n examples in :math:`\mathbb R^d`, feature dimension D, T SGD steps, a feature vector
costing Θ(dD) and a kernel value Θ(d) (the cost model of chapter 3). ①–④ give the same model for a
kernel with a finite feature map; ⑤ and ⑥ give the same model as each other (that of the
approximate kernel :math:`\psi(x)^T\psi(y)`). Each function returns an :class:`SGDResult` that
records its operation count and memory in these terms. The operation count is tallied as the
loop runs, from the sizes of what each step actually computes, so it checks the formulas above
rather than restating them; the memory is the size of the arrays each strategy holds.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._progress import Progress
from ._validation import (
    ClassifierScoreMixin,
    LostPhase,
    as_float_matrix,
    as_float_vector,
    check_labels,
    count_constraint,
    finite_values,
    real_constraint,
    refuse_complex_features,
    validate_data,
)
from .features import RandomFourierFeatures
from .kernels import Kernel
from .ridge import _copy_fitted_map

__all__ = [
    "SGDResult",
    "COSTS",
    "sgd_features_on_the_fly",
    "sgd_cached_features",
    "sgd_dual_kernel_on_the_fly",
    "sgd_dual_cached_gram",
    "sgd_approx_features_on_the_fly",
    "sgd_approx_cached_features",
    "STRATEGIES",
    "FeatureSGDClassifier",
]

#: Predicted big-Θ time and memory of each strategy (chapter 3).
COSTS = {
    1: ("features on the fly", "Θ(T d D)", "Θ(n d + D)"),
    2: ("cached features", "Θ(n d D + T D)", "Θ(n D)"),
    3: ("dual, kernel on the fly", "Θ(T n d)", "Θ(n d)"),
    4: ("dual, cached Gram matrix", "Θ(n² d + T n)", "Θ(n²)"),
    5: ("approximate features on the fly", "Θ(T d D)", "Θ(n d + d D)"),
    6: ("cached approximate features", "Θ(n d D + T D)", "Θ(n D + d D)"),
}


class SGDResult:
    """A trained model and what it cost.

    Attributes
    ----------
    strategy : int
        1 to 6, as in chapter 3.
    coef : ndarray
        w (shape (D,)) for the primal strategies ①②⑤⑥, u (shape (n,)) for ③④.
    space : {"primal", "dual"}
        Whether ``coef`` is w or u.
    operations : int
        Arithmetic operations tallied while the loop ran, in chapter 3's model: a feature
        vector of length D computed from d inputs costs d·D, a kernel value d, an inner
        product or an axpy of length m costs m.
    memory : int
        Numbers held in memory (data, cached features or Gram matrix, parameters).
    time_formula, memory_formula : str
        The predicted big-Θ forms.
    """

    def __init__(self, strategy, coef, space, operations, memory, *, predictor, n_features):
        self.strategy = strategy
        self.coef = coef
        self.space = space
        self.operations = int(operations)
        self.memory = int(memory)
        _, self.time_formula, self.memory_formula = COSTS[strategy]
        self._predictor = predictor
        self._n_features = n_features

    def predict(self, X):
        """h(x) = wᵀφ(x) (primal) or Σ_j u_j K(x_j, x) (dual)."""
        X = as_float_matrix(X, "X")
        if X.shape[1] != self._n_features:
            raise ValueError(
                f"X has {X.shape[1]} features but the model was trained on {self._n_features}."
            )
        return finite_values(lambda: self._predictor(X), X)

    def __repr__(self):
        return (
            f"SGDResult(strategy={self.strategy}, space={self.space!r}, "
            f"operations={self.operations}, memory={self.memory})"
        )


def _prepare(X, y, order, step_size):
    X = as_float_matrix(X, "X", allow_float32=False)
    y = as_float_vector(y, "y", n=len(X))
    order = np.asarray(order)
    if order.ndim != 1 or len(order) == 0 or not np.issubdtype(order.dtype, np.integer):
        raise ValueError("order must be a non-empty 1-D array of example indices (the i_t).")
    if order.min() < 0 or order.max() >= len(X):
        raise ValueError(f"order holds indices outside [0, {len(X)}).")
    if np.asarray(step_size).dtype == np.bool_:  # True was the step 1.0
        raise TypeError(f"step_size must be a number or one per step, got {step_size!r}.")
    steps = as_float_vector(np.atleast_1d(step_size), "step_size")
    if len(steps) not in (1, len(order)):
        raise ValueError(
            f"step_size must be a number or one per step ({len(order)}, the length of order), "
            f"got {len(steps)} values."
        )
    if not (steps > 0).all():
        raise ValueError("step_size must be positive and finite (a number or one per step).")
    steps = np.broadcast_to(steps, order.shape)
    return X, y, order.tolist(), steps.tolist()


def _check_diverged(coef, steps):
    """A loop whose coefficients left floating point diverged: the step size was too large
    for the scale of the features (least squares needs α‖φ(x)‖² < 2)."""
    if not np.isfinite(coef).all():
        raise ValueError(
            f"SGD diverged: the coefficients overflowed to infinity or NaN with step_size up "
            f"to {max(steps):.3g}; lower step_size (for least squares, below 2 / ‖φ(x)‖²)."
        )
    return coef


def _finite_kernel(kernel):
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a kernelcourse.kernels.Kernel, got {kernel!r}.")
    if not kernel.has_finite_features:
        raise ValueError(
            f"{kernel!r} has no finite feature map, so strategies ① and ② are not defined; "
            "use the dual strategies ③/④ or approximate features ⑤/⑥."
        )
    return kernel


def _transform(feature_map):
    if not hasattr(feature_map, "transform"):
        raise TypeError(
            "feature_map must be a fitted transformer with .transform (for example "
            f"RandomFourierFeatures), got {feature_map!r}."
        )

    def psi(X):
        Z = feature_map.transform(X)
        # a sparse map (random binning) failed in np.asarray: "setting an array element
        # with a sequence"; its rows are used densely here
        Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
        refuse_complex_features(Z, "feature_map")
        return Z.astype(np.float64, copy=False)

    return psi


class _Tally:
    """Operations counted as they happen, in the cost model of chapter 3."""

    def __init__(self, d):
        self.d = d
        self.total = 0

    def computed(self, values):
        """Feature vectors or kernel values just computed: each entry cost d."""
        self.total += self.d * values.size
        return values


def _sgd_on_w(get_feature, y, order, steps, D, tally):
    """The primal loop: w ← w − α (wᵀz − y_i) z with z = get_feature(i)."""
    w = np.zeros(D)
    with np.errstate(over="ignore", invalid="ignore"):  # divergence raises below
        for i, a in zip(order, steps, strict=True):
            z = get_feature(i)
            w -= (a * (float(z @ w) - y[i])) * z
            tally.total += 2 * z.size  # the inner product zᵀw and the axpy
    return _check_diverged(w, steps)


def _sgd_on_u(get_kernel_row, y, order, steps, n, tally):
    """The dual loop: u_i ← u_i − α (Σ_j u_j K(x_j, x_i) − y_i)."""
    u = np.zeros(n)
    with np.errstate(over="ignore", invalid="ignore"):  # divergence raises below
        for i, a in zip(order, steps, strict=True):
            row = get_kernel_row(i)
            u[i] -= a * (float(u @ row) - y[i])
            tally.total += row.size  # the inner product uᵀK e_i
    return _check_diverged(u, steps)


def sgd_features_on_the_fly(X, y, kernel, *, order, step_size):
    r"""① SGD on w, computing :math:`\phi(x_i)` afresh at every step.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,)
        Real targets (the squared loss).
    kernel : Kernel
        A kernel with a finite feature map φ (e.g. ``Polynomial``, ``Linear``).
    order : array of int, shape (T,)
        The example index :math:`i_t` used at step t.
    step_size : float or array of shape (T,)
        Step sizes :math:`\alpha_t`.

    Returns
    -------
    SGDResult
        Time Θ(T d D), memory Θ(n d + D).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.kernels import Polynomial
    >>> from kernelcourse.sgd import sgd_cached_features, sgd_features_on_the_fly
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2))
    >>> y = X[:, 0] * X[:, 1]
    >>> order = rng.integers(0, 50, size=500)
    >>> a = sgd_features_on_the_fly(X, y, Polynomial(degree=2), order=order, step_size=0.05)
    >>> b = sgd_cached_features(X, y, Polynomial(degree=2), order=order, step_size=0.05)
    >>> print(np.allclose(a.coef, b.coef), a.operations > b.operations)
    True True
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    k = _finite_kernel(kernel)
    (n, d), D = X.shape, k.feature_dim(X.shape[1])
    tally = _Tally(d)
    w = _sgd_on_w(
        lambda i: tally.computed(k.feature_map(X[i : i + 1])[0]), y, order, steps, D, tally
    )
    return SGDResult(
        1,
        w,
        "primal",
        tally.total,
        n * d + D,
        predictor=lambda Xq: k.feature_map(Xq) @ w,
        n_features=X.shape[1],
    )


def sgd_cached_features(X, y, kernel, *, order, step_size):
    r"""② Compute :math:`z_i = \phi(x_i)` for all i once, then SGD on w.

    Parameters as :func:`sgd_features_on_the_fly`. Time Θ(n d D + T D), memory Θ(n D).
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    k = _finite_kernel(kernel)
    tally = _Tally(X.shape[1])
    Z = tally.computed(k.feature_map(X))
    n, D = len(X), Z.shape[1]
    w = _sgd_on_w(Z.__getitem__, y, order, steps, D, tally)
    return SGDResult(
        2,
        w,
        "primal",
        tally.total,
        n * D + D,
        predictor=lambda Xq: k.feature_map(Xq) @ w,
        n_features=X.shape[1],
    )


def sgd_dual_kernel_on_the_fly(X, y, kernel, *, order, step_size):
    r"""③ SGD on the coefficients u, computing the n kernel values :math:`K(x_j, x_i)` of
    each step afresh.

    Works for any kernel, including those with infinite D (RBF). Time Θ(T n d), memory Θ(n d).
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a kernelcourse.kernels.Kernel, got {kernel!r}.")
    (n, d), tally = X.shape, _Tally(X.shape[1])
    u = _sgd_on_u(
        lambda i: tally.computed(kernel(X, X[i : i + 1])[:, 0]), y, order, steps, n, tally
    )
    return SGDResult(
        3,
        u,
        "dual",
        tally.total,
        n * d + n,
        predictor=lambda Xq: kernel(Xq, X) @ u,
        n_features=X.shape[1],
    )


def sgd_dual_cached_gram(X, y, kernel, *, order, step_size):
    r"""④ Compute the Gram matrix :math:`\mathbf K` once, then SGD on u with
    :math:`u^T \mathbf K e_i`.

    Time Θ(n² d + T n), memory Θ(n²).
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a kernelcourse.kernels.Kernel, got {kernel!r}.")
    tally = _Tally(X.shape[1])
    K = tally.computed(kernel(X))
    n = len(X)
    u = _sgd_on_u(K.__getitem__, y, order, steps, n, tally)  # row i of symmetric K is K e_i
    return SGDResult(
        4,
        u,
        "dual",
        tally.total,
        n * n + n,
        predictor=lambda Xq: kernel(Xq, X) @ u,
        n_features=X.shape[1],
    )


def sgd_approx_features_on_the_fly(X, y, feature_map, *, order, step_size):
    r"""⑤ SGD on w with approximate features :math:`\psi(x_i)` computed at every step.

    Parameters
    ----------
    feature_map : fitted transformer
        Any object with ``.transform`` mapping (m, d) inputs to (m, D) features, e.g.
        ``RandomFourierFeatures`` with :math:`\psi(x) = \sqrt{2/D}\cos(\Omega x + b)`
        (its Ω and b are the precomputed part).

    Time Θ(T d D), memory Θ(n d + d D).
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    psi = _transform(feature_map)
    D = psi(X[:1]).shape[1]
    (n, d), tally = X.shape, _Tally(X.shape[1])
    w = _sgd_on_w(lambda i: tally.computed(psi(X[i : i + 1])[0]), y, order, steps, D, tally)
    return SGDResult(
        5,
        w,
        "primal",
        tally.total,
        # the data, the map's frequencies Ω and phases b, and w
        n * d + d * D + 2 * D,
        predictor=lambda Xq: psi(Xq) @ w,
        n_features=X.shape[1],
    )


def sgd_approx_cached_features(X, y, feature_map, *, order, step_size):
    r"""⑥ Map every example once, :math:`z_i = \psi(x_i)`, cache them, then SGD on w.

    Parameters as :func:`sgd_approx_features_on_the_fly`. Time Θ(n d D + T D), memory
    Θ(n D + d D).
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    psi = _transform(feature_map)
    tally = _Tally(X.shape[1])
    Z = tally.computed(psi(X))
    (n, d), D = X.shape, Z.shape[1]
    w = _sgd_on_w(Z.__getitem__, y, order, steps, D, tally)
    return SGDResult(
        6,
        w,
        "primal",
        tally.total,
        # the cached features, the map's Ω and b (kept to map test points) and w, as ⑤
        n * D + d * D + 2 * D,
        predictor=lambda Xq: psi(Xq) @ w,
        n_features=X.shape[1],
    )


#: The six strategies by number.
STRATEGIES = {
    1: sgd_features_on_the_fly,
    2: sgd_cached_features,
    3: sgd_dual_kernel_on_the_fly,
    4: sgd_dual_cached_gram,
    5: sgd_approx_features_on_the_fly,
    6: sgd_approx_cached_features,
}


# -- strategy ⑤ out of core: SGD on random features, block by block ----------------------------
@njit(cache=True)
def _sgd_block(Z, y, w, w_avg, state, lam, eta0, logistic):
    """One pass of averaged SGD over the rows of Z (in order), in place.

    ``w[-1]`` is the unpenalized bias; ``state = [t, n_averaged]``. Step
    :math:`\\eta_t = \\eta_0 / (1 + \\eta_0 \\lambda t)`; the loss derivative is
    :math:`-y\\,1[y f < 1]` (hinge) or :math:`-y / (1 + e^{y f})` (logistic).

    Returns whether some margin :math:`f = w^T z + b` overflowed to infinity or NaN (the
    weights may stay finite: a NaN margin counted as classified, and its step was skipped).
    """
    D = Z.shape[1]
    overflow = False
    for i in range(Z.shape[0]):
        t = state[0]
        eta = eta0 / (1.0 + eta0 * lam * t)
        f = w[D]
        for k in range(D):
            f += Z[i, k] * w[k]
        if not np.isfinite(f):
            overflow = True
        m = y[i] * f
        if logistic:
            g = -y[i] / (1.0 + np.exp(m)) if m > -30.0 else -y[i]
        else:
            g = -y[i] if m < 1.0 else 0.0
        shrink = 1.0 - eta * lam
        for k in range(D):
            w[k] = shrink * w[k] - eta * g * Z[i, k]
        w[D] -= eta * g
        state[0] = t + 1.0
        state[1] += 1.0
        a = 1.0 / state[1]
        for k in range(D + 1):
            w_avg[k] += a * (w[k] - w_avg[k])
    return overflow


class FeatureSGDClassifier(ClassifierScoreMixin, ClassifierMixin, BaseEstimator):
    r"""Strategy ⑤ out of core: a linear classifier on approximate features :math:`\psi(x)`,
    trained by SGD on blocks of rows streamed from disk.

    A fixed random map ψ (random Fourier features by default) is applied to each block as it
    arrives, and every row takes one SGD step on

    .. math:: \tfrac{\lambda}{2}\|w\|^2 + \ell\big(y\,(w^T\psi(x) + b)\big),
              \qquad \ell(m) = \max(0, 1 - m) \text{ (hinge) or } \log(1 + e^{-m})
              \text{ (logistic)},

    with step :math:`\eta_t = \eta_0 / (1 + \eta_0 \lambda t)` and the averaged iterate
    :math:`\bar w_t = \frac1t \sum_{s \le t} w_s` as the model (Polyak–Ruppert averaging;
    Bottou 2010). Time Θ(T d D), memory Θ(block · D + d D): nothing of size n is held, which is
    strategy ⑤ of :doc:`chapter 3 </book/03_kernel_trick_six_ways>` applied to a file larger than
    memory. Rows are visited in the order they arrive; shuffle the stream if the file is sorted.

    Parameters
    ----------
    features : transformer or None, default=None
        ψ. A fitted transformer is used as it is (one fitted on a DataFrame takes X with the
        same columns); an unfitted one is cloned and fitted on the first block (fine for
        data-independent maps such as random Fourier features); None means
        ``RandomFourierFeatures(n_components=500)``.
    loss : {"hinge", "logistic"}, default="hinge"
    lam : float > 0, default=1e-6
        λ of the L2 penalty (per example).
    eta0 : float > 0, default=0.1
        Initial step :math:`\eta_0`.
    block_size : int >= 1, default=4096
        Rows mapped by ψ at a time inside a block (bounds the (rows, D) feature array).
    random_state : int, RandomState or None
        Seed of the default map.
    verbose : None, bool or int >= 0, default=None
        Progress within a call of ``fit`` or ``partial_fit`` (rows done, SGD steps, mean loss
        of the averaged model on the current batch, elapsed time), checked after each batch
        of ``block_size`` rows (the compiled loop runs a batch at a time). None: silent
        unless the call runs longer than 30 s, then a line every 30 s on standard error;
        0: never; 1: a line at most every second, 2: every batch, on standard output
        (:mod:`kernelcourse._progress`).

    Attributes
    ----------
    features_ : transformer
    coef_ : ndarray of shape (1, D)
        The averaged :math:`\bar w`.
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    n_samples_seen_ : int
        SGD steps taken (T).
    n_features_in_ : int

    See Also
    --------
    kernelcourse.ridge.FeatureRidge
        Ridge regression on the same features, solved exactly.

    Notes
    -----
    Binary only (one weight vector; scikit-learn's tag ``classifier_tags.multi_class`` is
    False): a y or ``classes`` with more than two labels is refused with "Only binary
    classification is supported", and one with a single class is refused too.

    References
    ----------
    Strategy ⑤: :doc:`chapter 3 </book/03_kernel_trick_six_ways>`;
    :doc:`chapter 11 </book/11_scaling_up>`. L. Bottou, "Large-scale machine learning with
    stochastic gradient descent", COMPSTAT 2010. S. Shalev-Shwartz et al., "Pegasos", ICML 2007. A.
    Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelcourse.features import RandomFourierFeatures
    >>> from kernelcourse.sgd import FeatureSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = (np.linalg.norm(X, axis=1) > 1.2).astype(int)
    >>> rff = RandomFourierFeatures(gamma=1.0, n_components=200, random_state=0)
    >>> clf = FeatureSGDClassifier(rff, lam=1e-4, random_state=0).fit(X, y)
    >>> print(clf.score(X, y) > 0.9)
    True
    """

    _parameter_constraints = {
        "features": [None, HasMethods(["fit", "transform"])],
        "loss": [StrOptions({"hinge", "logistic"})],
        "lam": [real_constraint(0, None, closed="neither")],
        "eta0": [real_constraint(0, None, closed="neither")],
        "block_size": [count_constraint()],
        "random_state": ["random_state"],
        "verbose": ["verbose", None],
    }

    def __init__(
        self,
        features=None,
        *,
        loss="hinge",
        lam=1e-6,
        eta0=0.1,
        block_size=4096,
        random_state=None,
        verbose=None,
    ):
        self.features = features
        self.loss = loss
        self.lam = lam
        self.eta0 = eta0
        self.block_size = block_size
        self.random_state = random_state
        self.verbose = verbose

    # What partial_fit learns; without "_w" its next call is a first call.
    _FITTED = ("features_", "classes_", "_w", "_w_avg", "_state", "n_samples_seen_")

    def _forget(self):
        """Drop what earlier fits learned: before a fit, or after a first call that failed."""
        for name in self._FITTED:
            self.__dict__.pop(name, None)

    def fit(self, X, y):
        """One SGD pass over the rows of an in-memory X (use :meth:`partial_fit` to stream)."""
        self._forget()
        # as partial_fit reads X: numbers as text ('1.5') are read, as scikit-learn's SGD does
        _, labels = validate_data(self, X, y, dtype=[np.float64, np.float32])
        check_labels(labels)
        # the original X, so that partial_fit records its feature names
        return self.partial_fit(X, y, classes=np.unique(labels))

    def partial_fit(self, X, y, classes=None):
        """One SGD step per row of this block.

        Parameters
        ----------
        X : array-like of shape (m, d)
        y : array-like of shape (m,)
        classes : array-like of shape (2,)
            Both labels; required on the first call (a block may hold only one).
        """
        first = "_w" not in vars(self)
        if (
            not first
            and classes is not None
            and not np.array_equal(self.classes_, np.unique(classes))
        ):
            # as scikit-learn's partial_fit: other classes were silently ignored
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to partial_fit, was: "
                f"{self.classes_!r}"
            )
        if first:
            self._validate_params()
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit.")
            if np.ndim(classes) > 1:  # np.unique flattened [[0, 1]] silently
                raise ValueError(
                    f"classes must be a 1-D array of labels, got shape {np.shape(classes)}."
                )
            # a NaN among them became a class, predicted as NaN
            classes = np.unique(check_labels(np.atleast_1d(classes), name="classes"))
            # the openings are those scikit-learn's checks (and users' code) look for
            if len(classes) > 2:
                raise ValueError(
                    "Only binary classification is supported: classes must hold exactly two "
                    f"labels for this binary classifier, got {classes.tolist()}."
                )
            if len(classes) != 2:
                what = "one class" if len(classes) == 1 else "no class"
                raise ValueError(
                    f"classes holds {what} ({classes.tolist()}), but this binary classifier "
                    "needs exactly two labels (fit takes them from y)."
                )
        X, y = validate_data(self, X, y, reset=first, dtype=[np.float64, np.float32])
        check_labels(y)
        known = classes if first else self.classes_
        unknown = ~np.isin(y, known)
        if unknown.any():  # before any state is set: a failed first call leaves none
            raise ValueError(
                f"y holds labels {np.unique(y[unknown]).tolist()} outside classes "
                f"{np.asarray(known).tolist()}."
            )
        if first:
            self.classes_ = classes
            if self.features is None:
                self.features_ = RandomFourierFeatures(
                    n_components=500, random_state=self.random_state
                ).fit(X)
            elif _fitted(self.features):
                names = vars(self).get("feature_names_in_")
                try:
                    self.features_ = _copy_fitted_map(self.features, names, type(self).__name__)
                except ValueError:  # columns other than the map's: a failed first call
                    self._forget()
                    raise
            else:
                self.features_ = clone(self.features).fit(X)
            # a row of zeros, only to see the features' kind and number (a row of X warned a
            # second time, with its own largest argument, where the cosine's phase is lost)
            Z1 = self.features_.transform(np.zeros_like(X[:1]))
            if sp.issparse(Z1):
                # the compiled SGD pass reads a dense block (a CSR matrix failed in numpy)
                name = type(self.features_).__name__
                self._forget()
                raise TypeError(
                    f"features must return a dense array; {name} returns "
                    f"{type(Z1).__name__}. Use FeatureRidgeClassifier for sparse features."
                )
            if np.iscomplexobj(Z1):
                self._forget()
                refuse_complex_features(Z1, "features")
            D = Z1.shape[1]
            self._w, self._w_avg = np.zeros(D + 1), np.zeros(D + 1)
            self._state = np.zeros(2)
            self.n_samples_seen_ = 0
        s = np.where(y == self.classes_[1], 1.0, -1.0)
        # restored if this call diverges (roll_back below)
        saved = (self._w.copy(), self._w_avg.copy(), self._state.copy())
        progress = Progress(f"{type(self).__name__}.partial_fit", self.verbose)
        overflow, big = False, 0.0
        phase = LostPhase()  # one warning for all blocks (each block warned on its own)
        for start in range(0, len(X), self.block_size):
            Z = np.ascontiguousarray(
                phase.transform(self.features_, X[start : start + self.block_size]),
                dtype=np.float64,
            )
            if _sgd_block(
                Z,
                s[start : start + self.block_size],
                self._w,
                self._w_avg,
                self._state,
                float(self.lam),
                float(self.eta0),
                self.loss == "logistic",
            ):
                overflow, big = True, max(big, float(np.abs(Z).max()))
            if progress and progress.due():
                progress.report(self._progress_line(Z, s[start : start + len(Z)], start, len(X)))

        phase.warn()  # before a divergence below is refused: the features may be why

        def roll_back():  # a failed call leaves the model as it was
            if first:
                self._forget()
            else:
                self._w, self._w_avg, self._state = saved

        if not (np.isfinite(self._w).all() and np.isfinite(self._w_avg).all()):
            # a first step with η₀λ > 1 flips and grows w; from η₀λ ≈ 1e308 on it is NaN
            roll_back()
            raise ValueError(
                f"SGD diverged: the weights overflowed to infinity or NaN with eta0={self.eta0!r}"
                f" and lam={self.lam!r}; lower eta0 (η₀λ below 1 keeps the first steps stable)."
            )
        if overflow:
            # the weights can stay finite while wᵀψ(x) overflows: the fit was then silently
            # garbage (a NaN hinge margin counts as classified), and so were its predictions
            top = float(np.abs(self._w).max())
            roll_back()
            raise ValueError(
                f"SGD diverged: the margins wᵀψ(x) + b overflowed to infinity or NaN, with "
                f"features of magnitude up to {big:.3g} and weights up to {top:.3g}; rescale X "
                "(or the features), or lower eta0."
            )
        self.n_samples_seen_ += len(X)
        progress.finish(f"done: {len(X)} rows, {self.n_samples_seen_} SGD steps in all")
        self.coef_ = self._w_avg[None, :-1].copy()
        self.intercept_ = self._w_avg[-1:].copy()
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # one weight vector: two classes
        return tags

    def _progress_line(self, Z, s, start, n):
        """Rows done, steps, and the loss of the averaged model on this batch (computed only
        when a line is written)."""
        # (margins that overflow are refused after the pass, with their own error)
        with np.errstate(over="ignore", invalid="ignore"):
            m = s * (Z @ self._w_avg[:-1] + self._w_avg[-1])
            loss = np.logaddexp(0.0, -m) if self.loss == "logistic" else np.maximum(0.0, 1.0 - m)
        return (
            f"{start + len(Z)} of {n} rows, {self.n_samples_seen_ + start + len(Z)} SGD "
            f"steps: mean {self.loss} loss of the averaged model on this batch "
            f"{float(np.mean(loss)):.4g}"
        )

    def decision_function(self, X):
        r""":math:`\bar w^T \psi(x) + b`, computed in blocks of ``block_size``."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])

        def scores():
            out = np.empty(len(X))
            phase = LostPhase()  # one warning for all blocks
            for start in range(0, len(X), self.block_size):
                Z = np.asarray(phase.transform(self.features_, X[start : start + self.block_size]))
                out[start : start + len(Z)] = Z @ self.coef_[0] + self.intercept_[0]
            phase.warn()
            return out

        # NaN scores came back with numpy's warnings only, and predict made them class 0
        return finite_values(scores, X, "decision values")

    def predict(self, X):
        scores = self.decision_function(X)  # raises NotFittedError before fit
        return self.classes_[(scores > 0).astype(int)]


def _fitted(est):
    try:
        check_is_fitted(est)
    except NotFittedError:
        return False
    return True
