r"""Six ways to train a kernel model with SGD (lecture 000, "Kernels and Feature Extraction").

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
costing Θ(dD) and a kernel value Θ(d) (the lecture's activity). ①–④ give the same model for a
kernel with a finite feature map; ⑤ and ⑥ give the same model as each other (that of the
approximate kernel :math:`\psi(x)^T\psi(y)`). Each function returns an :class:`SGDResult` that
records its operation count and memory in these terms. The operation count is tallied as the
loop runs, from the sizes of what each step actually computes, so it checks the formulas above
rather than restating them; the memory is the size of the arrays each strategy holds.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_matrix
from .kernels import Kernel

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
]

#: Predicted big-Θ time and memory of each strategy (lecture 000's activity).
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
        1 to 6, as in lecture 000.
    coef : ndarray
        w (shape (D,)) for the primal strategies ①②⑤⑥, u (shape (n,)) for ③④.
    space : {"primal", "dual"}
        Whether ``coef`` is w or u.
    operations : int
        Arithmetic operations tallied while the loop ran, in the lecture's model: a feature
        vector of length D computed from d inputs costs d·D, a kernel value d, an inner
        product or an axpy of length m costs m.
    memory : int
        Numbers held in memory (data, cached features or Gram matrix, parameters).
    time_formula, memory_formula : str
        The predicted big-Θ forms.
    """

    def __init__(self, strategy, coef, space, operations, memory, *, predictor):
        self.strategy = strategy
        self.coef = coef
        self.space = space
        self.operations = int(operations)
        self.memory = int(memory)
        _, self.time_formula, self.memory_formula = COSTS[strategy]
        self._predictor = predictor

    def predict(self, X):
        """h(x) = wᵀφ(x) (primal) or Σ_j u_j K(x_j, x) (dual)."""
        return self._predictor(as_float_matrix(X, "X"))

    def __repr__(self):
        return (
            f"SGDResult(strategy={self.strategy}, space={self.space!r}, "
            f"operations={self.operations}, memory={self.memory})"
        )


def _prepare(X, y, order, step_size):
    X = as_float_matrix(X, "X", allow_float32=False)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (len(X),):
        raise ValueError(f"y must have shape ({len(X)},) to match X, got {y.shape}.")
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity.")
    order = np.asarray(order)
    if order.ndim != 1 or len(order) == 0 or not np.issubdtype(order.dtype, np.integer):
        raise ValueError("order must be a non-empty 1-D array of example indices (the i_t).")
    if order.min() < 0 or order.max() >= len(X):
        raise ValueError(f"order holds indices outside [0, {len(X)}).")
    steps = np.broadcast_to(np.asarray(step_size, dtype=np.float64), order.shape)
    if not (np.isfinite(steps).all() and (steps > 0).all()):
        raise ValueError("step_size must be positive and finite (a number or one per step).")
    return X, y, order.tolist(), steps.tolist()


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
    return lambda X: np.asarray(feature_map.transform(X), dtype=np.float64)


class _Tally:
    """Operations counted as they happen, in the lecture's cost model (lecture 000)."""

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
    for i, a in zip(order, steps, strict=True):
        z = get_feature(i)
        w -= (a * (float(z @ w) - y[i])) * z
        tally.total += 2 * z.size  # the inner product zᵀw and the axpy
    return w


def _sgd_on_u(get_kernel_row, y, order, steps, n, tally):
    """The dual loop: u_i ← u_i − α (Σ_j u_j K(x_j, x_i) − y_i)."""
    u = np.zeros(n)
    for i, a in zip(order, steps, strict=True):
        row = get_kernel_row(i)
        u[i] -= a * (float(u @ row) - y[i])
        tally.total += row.size  # the inner product uᵀK e_i
    return u


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
    """
    X, y, order, steps = _prepare(X, y, order, step_size)
    k = _finite_kernel(kernel)
    (n, d), D = X.shape, k.feature_dim(X.shape[1])
    tally = _Tally(d)
    w = _sgd_on_w(
        lambda i: tally.computed(k.feature_map(X[i : i + 1])[0]), y, order, steps, D, tally
    )
    return SGDResult(
        1, w, "primal", tally.total, n * d + D, predictor=lambda Xq: k.feature_map(Xq) @ w
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
        2, w, "primal", tally.total, n * D + D, predictor=lambda Xq: k.feature_map(Xq) @ w
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
    return SGDResult(3, u, "dual", tally.total, n * d + n, predictor=lambda Xq: kernel(Xq, X) @ u)


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
    return SGDResult(4, u, "dual", tally.total, n * n + n, predictor=lambda Xq: kernel(Xq, X) @ u)


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
        5, w, "primal", tally.total, n * d + d * D + D, predictor=lambda Xq: psi(Xq) @ w
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
    return SGDResult(6, w, "primal", tally.total, n * D + d * D, predictor=lambda Xq: psi(Xq) @ w)


#: The six strategies by number.
STRATEGIES = {
    1: sgd_features_on_the_fly,
    2: sgd_cached_features,
    3: sgd_dual_kernel_on_the_fly,
    4: sgd_dual_cached_gram,
    5: sgd_approx_features_on_the_fly,
    6: sgd_approx_cached_features,
}
