"""Self-checks for homework 2: ridge, kernel ridge and the push-through identity
(:doc:`chapter 4 </book/04_ridge_to_kernel_ridge>`).

Every check tests an optimality condition or an identity, not a stored answer: the ridge
weights make the gradient of the MAP objective vanish, and kernel ridge predictions are linear
in the test kernel rows with coefficients α solving (K + λI)α = y.
"""

from __future__ import annotations

import numpy as np

from ...kernels import RBF
from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "q4"]

# What else would answer these questions in one call.
RIDGE_SOLVERS = ("sklearn.linear_model", "sklearn.kernel_ridge")


def _problem(rng, n, D):
    Phi = rng.normal(size=(n, D))
    y = Phi @ rng.normal(size=D) + 0.1 * rng.normal(size=n)
    return Phi, y


def _gradient_vanishes(Phi, y, lam, w):
    """∇_w [‖y − Φw‖² + λ‖w‖²] / 2 = Φᵀ(Φw − y) + λw, relative to the size of Φᵀy."""
    w = np.asarray(w, dtype=float)
    assert w.shape == (Phi.shape[1],), f"w has shape {w.shape}, expected ({Phi.shape[1]},)"
    grad = Phi.T @ (Phi @ w - y) + lam * w
    scale = np.linalg.norm(Phi.T @ y) + 1.0
    close(grad / scale, np.zeros_like(grad), atol=1e-9, what="the gradient of the objective at w")


def q1(student_ridge_primal, *, seed=None):
    """Check ``ridge_primal(Phi, y, lam)``: the gradient of ‖y − Φw‖² + λ‖w‖² vanishes at w."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw2.q1", student_ridge_primal, forbid=RIDGE_SOLVERS)
    for n, D in ((30, 5), (6, 12), (20, 4)):

        @c.test(
            f"the gradient of the MAP objective vanishes at w for n = {n}, D = {D}",
            "set the gradient of ‖y − Φw‖² + λ‖w‖² to zero and solve the linear system it "
            "gives (no explicit inverse); check which identity matrix, D×D or n×n, it needs.",
        )
        def _(n=n, D=D):
            Phi, y = _problem(rng, n, D)
            lam = float(rng.uniform(0.1, 2))
            _gradient_vanishes(Phi, y, lam, c.fn(Phi, y, lam))

    c.finish()


def q2(student_ridge_dual, *, seed=None):
    """Check ``ridge_dual(Phi, y, lam)`` = Φᵀ(λI_n + ΦΦᵀ)⁻¹y: optimal, in the span of Φ's rows."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw2.q2", student_ridge_dual, forbid=RIDGE_SOLVERS)
    for n, D in ((8, 40), (25, 3)):

        @c.test(
            f"solves the ridge problem for n = {n}, D = {D} (push-through)",
            "the dual system is n×n; w is a combination of the rows of Φ.",
        )
        def _(n=n, D=D):
            Phi, y = _problem(rng, n, D)
            lam = float(rng.uniform(0.1, 2))
            _gradient_vanishes(Phi, y, lam, c.fn(Phi, y, lam))

    @c.test(
        "w lies in the span of the training features (w = Φᵀα)",
        "the dual form writes w as a combination Σ α_i φ(x_i) of the rows of Φ.",
    )
    def _():
        Phi, y = _problem(rng, 4, 10)
        w = np.asarray(c.fn(Phi, y, 0.5))
        alpha, *_ = np.linalg.lstsq(Phi.T, w, rcond=None)
        close(Phi.T @ alpha, w, what="the projection of w on span{φ(x_i)}")

    c.finish()


def q4(student_kernel_ridge_predict, *, seed=None):
    """Check ``kernel_ridge_predict(K, y, lam, K_test)`` = K_test (K + λI)⁻¹ y.

    With ``K_test = I`` the function returns α itself, so the check verifies (K + λI)α = y and
    that predictions are K_test α for other test rows.
    """
    rng = fresh_rng(seed)
    c = SelfCheck("hw2.q4", student_kernel_ridge_predict, forbid=RIDGE_SOLVERS)
    X = rng.uniform(-2, 2, size=(30, 2))
    y = np.sin(X[:, 0]) + X[:, 1]
    K = RBF(gamma=0.8)(X)

    @c.test(
        "the coefficients α solve (K + λI) α = y",
        "α comes from the n×n training Gram matrix alone; the test rows enter only afterwards.",
    )
    def _():
        alpha = np.asarray(c.fn(K, y, 0.1, np.eye(30)), dtype=float)
        assert alpha.shape == (30,), f"with K_test = I (30×30) got shape {alpha.shape}"
        close(K @ alpha + 0.1 * alpha, y, rtol=1e-8, atol=1e-8, what="(K + λI) α")

    @c.test(
        "predicts K_test α, one value per test point (row of K_test)",
        "K_test has one row per test point and one column per training point: check the "
        "shape of your product.",
    )
    def _():
        Xt = rng.uniform(-2, 2, size=(7, 2))
        K_test = RBF(gamma=0.8)(Xt, X)
        alpha = np.asarray(c.fn(K, y, 0.1, np.eye(30)), dtype=float)
        got = c.fn(K, y, 0.1, K_test)
        close(got, K_test @ alpha, rtol=1e-8, atol=1e-10, what="the predictions")

    c.finish()
